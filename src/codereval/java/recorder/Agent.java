package codereval.recorder;

import java.lang.instrument.Instrumentation;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.matcher.ElementMatchers;

/**
 * codereval build's recorder: a Java agent that records the calls a project's own test suite
 * makes to the methods of the tasks (receiver and arguments before the call, the value returned
 * or the exception thrown, receiver and arguments after it), as XStream XML.
 *
 * <p>Usage: {@code -javaagent:recorder.jar=CONFIG} where CONFIG is a file of tab-separated lines:
 * {@code out FILE}, {@code max N}, and per task {@code target ID CLASS METHOD TYPES} (CLASS the
 * binary name, TYPES the parameters' simple names joined by commas, {@code ?} for a type
 * variable). ByteBuddy's Advice inlines a call to {@link Recorder} at the start and end of each
 * target method as its class is loaded; nothing else of the program is touched.
 */
public final class Agent {
    private Agent() {}

    public static void premain(String argument, Instrumentation inst) {
        Recorder.Config config;
        try {
            config = Recorder.Config.read(Paths.get(argument));
        } catch (Exception e) {
            System.err.println("codereval recorder: cannot read its configuration: " + e);
            return;
        }
        Recorder.start(config);
        openPlatform(inst);
        Map<String, Recorder.Target> byClass = new HashMap<>();
        for (Recorder.Target target : config.targets) {
            byClass.put(target.className, target);
        }
        new AgentBuilder.Default()
            .disableClassFormatChanges()
            .with(AgentBuilder.Listener.NoOp.INSTANCE)
            .type(ElementMatchers.namedOneOf(byClass.keySet().toArray(new String[0])))
            .transform((builder, type, loader, module, domain) -> {
                ElementMatcher<MethodDescription> matcher = method -> {
                    for (Recorder.Target target : config.targets) {
                        if (target.className.equals(type.getName()) && matches(target, method)) {
                            Recorder.register(signature(method), target);
                            return true;
                        }
                    }
                    return false;
                };
                return builder.visit(Advice.to(CallAdvice.class).on(matcher));
            })
            .installOn(inst);
    }

    /** The key CallAdvice's {@code @Advice.Origin("#t\t#m\t#d")} gives the same method. */
    static String signature(MethodDescription method) {
        return method.getDeclaringType().asErasure().getName() + "\t" + method.getName() + "\t"
            + method.getDescriptor();
    }

    static boolean matches(Recorder.Target target, MethodDescription method) {
        if (!method.isMethod() || method.isAbstract() || !method.getName().equals(target.method)
                || method.getParameters().size() != target.types.length) {
            return false;
        }
        for (int i = 0; i < target.types.length; i++) {
            String wanted = target.types[i];
            if ("?".equals(wanted)) {
                continue;
            }
            TypeDescription erased = method.getParameters().get(i).getType().asErasure();
            if (!wanted.equals(simpleName(erased))) {
                return false;
            }
        }
        return true;
    }

    private static String simpleName(TypeDescription type) {
        if (type.isArray()) {
            return simpleName(type.getComponentType()) + "[]";
        }
        String name = type.getName();
        int cut = Math.max(name.lastIndexOf('.'), name.lastIndexOf('$'));
        return name.substring(cut + 1);
    }

    /**
     * XStream reads and writes fields by reflection, which Java 17 refuses on the JDK's own
     * classes unless their packages are opened: open every package of the boot layer to the
     * recorder's (unnamed) module, as {@code --add-opens} would.
     */
    private static void openPlatform(Instrumentation inst) {
        Module unnamed = Agent.class.getClassLoader().getUnnamedModule();
        for (Module module : ModuleLayer.boot().modules()) {
            Map<String, Set<Module>> opens = new HashMap<>();
            for (String pkg : module.getPackages()) {
                opens.put(pkg, Collections.singleton(unnamed));
            }
            try {
                inst.redefineModule(module, Collections.emptySet(), Collections.emptyMap(), opens,
                    Collections.emptySet(), Collections.emptyMap());
            } catch (RuntimeException e) {
                // A module that cannot be redefined keeps its encapsulation: objects holding its
                // classes are dropped from the recording (the reason is counted).
            }
        }
    }
}
