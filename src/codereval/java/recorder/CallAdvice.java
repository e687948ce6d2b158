package codereval.recorder;

import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/** Inlined by ByteBuddy at the start and the end of every target method. */
public final class CallAdvice {
    private CallAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static Object enter(@Advice.Origin("#t\t#m\t#d") String signature,
                        @Advice.This(optional = true) Object self,
                        @Advice.AllArguments Object[] arguments) {
        return Recorder.enter(signature, self, arguments);
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.Enter Object call,
                     @Advice.Return(typing = Assigner.Typing.DYNAMIC) Object value,
                     @Advice.Thrown Throwable thrown) {
        if (call != null) {
            Recorder.exit(call, value, thrown);
        }
    }
}
