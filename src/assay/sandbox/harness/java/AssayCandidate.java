// The candidate's process: find the method by name in the compiled classes, then answer
// each call frame; arguments are decoded to the declared (generic) parameter types.
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class AssayCandidate {
    private static DataInputStream framesIn;
    private static OutputStream framesOut;

    public static void main(String[] args) throws Exception {
        framesIn = new DataInputStream(new FileInputStream(descriptor(3)));
        framesOut = new FileOutputStream(descriptor(4));
        String name = args[0];
        List<Method> methods = findMethods(name);
        if (methods.isEmpty()) {
            write(loadError("missing_function", "NameError", "the code defines no method named '" + name + "'"));
            return;
        }
        Object instance = null;
        Method first = methods.get(0);
        if (!Modifier.isStatic(first.getModifiers())) {
            try {
                var constructor = first.getDeclaringClass().getDeclaredConstructor();
                constructor.setAccessible(true);
                instance = constructor.newInstance();
            } catch (ReflectiveOperationException error) {
                Throwable cause = error instanceof InvocationTargetException ? error.getCause() : error;
                write(loadError("exception", cause.getClass().getSimpleName(), String.valueOf(cause.getMessage())));
                return;
            }
        }
        new Clock(); // loads the JVM's management classes now, not in the first call
        write(map("event", "ready"));
        while (true) {
            Object call = read();
            if (call == null) return;
            Map<String, Object> reply = answer(methods, instance, call);
            System.out.flush();
            write(reply);
        }
    }

    /** The inherited pipe itself: a pipe of another uid cannot be reopened through /proc. */
    private static FileDescriptor descriptor(int number) throws ReflectiveOperationException {
        FileDescriptor descriptor = new FileDescriptor();
        Field field = FileDescriptor.class.getDeclaredField("fd"); // --add-opens java.base/java.io
        field.setAccessible(true);
        field.setInt(descriptor, number);
        return descriptor;
    }

    private static List<Method> findMethods(String name) throws Exception {
        List<Method> found = new ArrayList<>();
        File[] files = new File("classes").listFiles();
        if (files == null) return found;
        ClassLoader loader = AssayCandidate.class.getClassLoader();
        for (File file : files) {
            String fileName = file.getName();
            if (!fileName.endsWith(".class") || fileName.startsWith("Assay")) continue;
            Class<?> kind;
            try {
                kind = Class.forName(fileName.substring(0, fileName.length() - 6), false, loader);
            } catch (LinkageError | ClassNotFoundException error) {
                continue;
            }
            for (Method method : kind.getDeclaredMethods()) {
                if (method.getName().equals(name) && !method.isSynthetic()) {
                    method.setAccessible(true);
                    found.add(method);
                }
            }
            if (!found.isEmpty()) return found;
        }
        return found;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> answer(List<Method> methods, Object instance, Object call) {
        Map<String, Object> frame = (Map<String, Object>) call;
        Object kwargs = frame.get("kwargs");
        if (kwargs instanceof Map && !((List<Object>) ((Map<String, Object>) kwargs).getOrDefault("$dict", List.of())).isEmpty()) {
            return failure("TypeError", "Java methods take positional arguments only", "");
        }
        List<Object> args = (List<Object>) frame.get("args");
        Method method = null;
        for (Method candidate : methods) {
            if (candidate.getParameterCount() == args.size()) method = candidate;
        }
        if (method == null) {
            return failure("TypeError", "no method '" + methods.get(0).getName() + "' takes " + args.size() + " arguments", "");
        }
        Object[] values = new Object[args.size()];
        try {
            for (int i = 0; i < values.length; i++) {
                values[i] = AssayCodec.decode(args.get(i), method.getGenericParameterTypes()[i], 0);
            }
        } catch (RuntimeException error) {
            return failure("TypeError", error.getMessage(), "");
        }
        Object result;
        Clock clock = new Clock();
        try {
            result = method.invoke(instance, values);
        } catch (InvocationTargetException error) {
            Map<String, Object> time = clock.elapsed();
            Throwable cause = error.getCause();
            return timed(failure(cause.getClass().getSimpleName(), String.valueOf(cause.getMessage()), trace(cause)), time);
        } catch (IllegalAccessException error) {
            return timed(failure("IllegalAccessException", error.getMessage(), ""), clock.elapsed());
        }
        Map<String, Object> time = clock.elapsed();
        try {
            Map<String, Object> reply = map("ok", Boolean.TRUE);
            reply.put("value", AssayCodec.encode(result, 0));
            return timed(reply, time);
        } catch (AssayCodec.Unsupported | StackOverflowError error) {
            return timed(failure("UnsupportedReturnValue", "the return value cannot leave the sandbox: " + error.getMessage(), ""), time);
        }
    }

    private static Map<String, Object> timed(Map<String, Object> reply, Map<String, Object> time) {
        reply.put("time", time);
        return reply;
    }

    /**
     * The reply's {@code time} field, the same in every language: the call alone (not decoding
     * its arguments nor encoding its value), in milliseconds. CPU time is the calling thread's
     * (the collector and JIT threads are not counted) when the JVM can measure it, else the
     * whole process's.
     */
    private static final class Clock {
        private static final ThreadMXBean THREADS = threadClock();
        private static final com.sun.management.OperatingSystemMXBean PROCESS = processClock();
        private final long wall = System.nanoTime();
        private final long cpu = cpuNanos();

        Map<String, Object> elapsed() {
            long cpuNow = cpuNanos();
            Map<String, Object> out = map("wall_ms", (System.nanoTime() - wall) / 1e6);
            out.put("cpu_ms", cpu < 0 || cpuNow < 0 ? null : (cpuNow - cpu) / 1e6);
            return out;
        }

        private static long cpuNanos() {
            if (THREADS != null) return THREADS.getCurrentThreadCpuTime();
            return PROCESS == null ? -1 : PROCESS.getProcessCpuTime();
        }

        private static ThreadMXBean threadClock() {
            try {
                ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                if (!threads.isCurrentThreadCpuTimeSupported()) return null;
                if (!threads.isThreadCpuTimeEnabled()) threads.setThreadCpuTimeEnabled(true);
                return threads.getCurrentThreadCpuTime() >= 0 ? threads : null;
            } catch (RuntimeException | LinkageError error) {
                return null;
            }
        }

        private static com.sun.management.OperatingSystemMXBean processClock() {
            try {
                Object system = ManagementFactory.getOperatingSystemMXBean();
                return system instanceof com.sun.management.OperatingSystemMXBean ? (com.sun.management.OperatingSystemMXBean) system : null;
            } catch (RuntimeException | LinkageError error) {
                return null;
            }
        }
    }

    private static String trace(Throwable error) {
        StringBuilder out = new StringBuilder(error.toString());
        for (StackTraceElement element : error.getStackTrace()) {
            String where = element.getClassName();
            if (where.startsWith("java.") || where.startsWith("jdk.") || where.startsWith("Assay")) continue;
            out.append("\n\tat ").append(element);
        }
        return out.toString();
    }

    private static Map<String, Object> map(String key, Object value) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(key, value);
        return out;
    }

    private static Map<String, Object> failure(String type, String message, String trace) {
        Map<String, Object> out = map("ok", Boolean.FALSE);
        out.put("error_type", type);
        out.put("message", message == null ? "" : message);
        out.put("traceback", trace);
        return out;
    }

    private static Map<String, Object> loadError(String kind, String type, String message) {
        Map<String, Object> out = map("event", "load_error");
        out.put("kind", kind);
        out.put("error_type", type);
        out.put("message", message);
        out.put("traceback", "");
        return out;
    }

    private static Object read() throws IOException {
        int length;
        try {
            length = framesIn.readInt();
        } catch (EOFException end) {
            return null;
        }
        if (length < 0 || length > 64 * 1024 * 1024) throw new IOException("frame too large");
        byte[] body = new byte[length];
        framesIn.readFully(body);
        return AssayJson.parse(new String(body, StandardCharsets.UTF_8));
    }

    private static void write(Map<String, Object> message) throws IOException {
        AssayJson.writeFrame(framesOut, message);
    }
}
