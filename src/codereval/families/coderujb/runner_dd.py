"""CoderUJB defect detection: the model answers whether a method is defective; nothing runs.

The answer is read from the sample's code (the extracted answer text) with the same rule under
which it will be scored: the original harness's phrase list under ``--compat``, our reading of
the first clear statement otherwise (see codereval.families.coderujb.extraction). The verdict
is ``passed`` when the answer matches the truth, ``failed`` when it does not, ``no_code`` when
the answer says neither; the parsed answer is kept in ``ujb.prediction`` for precision and recall.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from codereval.families.coderujb.extraction import parse_dd_answer
from codereval.model import Outcome, Sample, Stage, Task, UjbKind, UjbMeasures, Verdict
from codereval.runners.base import RunContext, Runner

# Recorded as the isolation: no code was run, so none was needed.
NOT_EXECUTED = "none (not executed)"


def _word(defective: bool | None) -> str:
    return {True: "defective", False: "not defective", None: "no answer"}[defective]


class CoderUjbDefectRunner(Runner):
    name = "coderujb-dd"

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        return {
            t.task_id: "not a CoderUJB defect-detection task with a known answer"
            for t in tasks
            if t.ujb is None or t.ujb.kind is not UjbKind.DD or t.ujb.defective is None
        }

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        started = time.monotonic()
        assert task.ujb is not None and task.ujb.defective is not None
        prediction = parse_dd_answer(sample.code or "", compat=ctx.compat)
        truth = task.ujb.defective
        if prediction is None:
            verdict, stage = Verdict.NO_CODE, Stage.EXTRACT
        else:
            verdict = Verdict.PASSED if prediction == truth else Verdict.FAILED
            stage = Stage.DONE
        return Outcome(
            task_id=sample.task_id,
            sample_index=sample.index,
            verdict=verdict,
            stage=stage,
            wall_time=time.monotonic() - started,
            cpu_time=0.0,
            detail=f"answered {_word(prediction)}; the method is {_word(truth)}",
            isolation=NOT_EXECUTED,
            ujb=UjbMeasures(prediction=prediction),
        )

    def environment_fingerprint(self, task: Task, ctx: RunContext) -> str:
        rule = "original phrase list" if ctx.compat else "first clear statement"
        return f"coderujb-dd: no execution; answers read by the {rule}"
