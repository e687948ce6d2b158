"""Java support: the toolchain, the warm compiler service and the test harness.

``codereval.java.compiler.WarmJavac`` compiles Java sources inside a long-lived JVM and is reused
by every runner that compiles Java (projects, HumanEval-X programs); ``PlainJavac`` beside it is
the one-process-per-compile fallback with the same interface. Both return javac's own printed
diagnostics. Nothing is imported here so that ``python -m codereval.java.build`` stays clean.
"""
