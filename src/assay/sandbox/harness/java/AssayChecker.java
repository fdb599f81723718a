// The test program's side in Java: runs the test class's main, where the entry point is a
// proxy method (see ../proxies.py) forwarding each call to the candidate's process (call
// frames on fd 5, replies on fd 6); the verdict goes to the parent on fd 4.
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class AssayChecker {
    private static OutputStream verdicts;
    private static OutputStream calls;
    private static DataInputStream replies;
    private static long maxValueBytes = 64L * 1024 * 1024;
    private static long callCount = 0;
    private static double wallMs = 0, cpuMs = 0;

    public static void main(String[] argv) throws Exception {
        verdicts = new FileOutputStream(descriptor(4));
        calls = new FileOutputStream(descriptor(5));
        replies = new DataInputStream(new FileInputStream(descriptor(6)));
        String testClass = argv[0];
        long limit = Long.parseLong(argv[1]);
        if (limit > 0) maxValueBytes = limit;
        int offset = Integer.parseInt(argv[2]);
        handshake();
        Map<String, Object> started = new LinkedHashMap<>();
        started.put("event", "started");
        write(verdicts, started); // the test's time starts now, after the parent's go-ahead
        DataInputStream parent = new DataInputStream(new FileInputStream(descriptor(3)));
        try {
            parent.readFully(new byte[parent.readInt()]);
        } catch (IOException gone) {
            Runtime.getRuntime().halt(0);
        }
        try {
            Method main = Class.forName(testClass).getMethod("main", String[].class);
            main.invoke(null, (Object) new String[0]);
        } catch (InvocationTargetException error) {
            Throwable cause = error.getCause();
            Map<String, Object> fields = fields(
                cause instanceof AssertionError ? "assertion" : "exception",
                cause.getClass().getSimpleName(),
                cause.getMessage() == null ? "" : cause.getMessage());
            testLine(cause, testClass + ".java", offset, fields);
            verdict(false, fields);
        } catch (ReflectiveOperationException error) {
            verdict(false, fields("exception", error.getClass().getSimpleName(),
                "the test class " + testClass + " has no usable main: " + error));
        }
        verdict(true, new LinkedHashMap<>());
    }

    /** The body of the entry point's proxy: ``self`` is the proxy method itself. */
    public static Object call(Method self, String name, Object[] args) {
        callCount++;
        Map<String, Object> reply;
        try {
            List<Object> encoded = new java.util.ArrayList<>();
            for (Object arg : args) encoded.add(AssayCodec.encode(arg, 0));
            Map<String, Object> frame = new LinkedHashMap<>();
            frame.put("args", encoded);
            frame.put("kwargs", Map.of("$dict", List.of()));
            write(calls, frame);
            reply = receive(maxValueBytes);
        } catch (IOException | RuntimeException | StackOverflowError error) {
            throw fail("candidate_ended", "CandidateEnded", "calling " + name + ": " + error.getMessage());
        }
        addTime(reply.get("time"));
        Object ok = reply.get("ok");
        if (!(ok instanceof Boolean)) throw fail("candidate_ended", "CandidateEnded", "the candidate sent malformed data");
        if (!(Boolean) ok) {
            throw fail("candidate_error", String.valueOf(reply.get("error_type")),
                "calling " + name + ": " + reply.get("message"));
        }
        if (self.getReturnType() == void.class) return null;
        try {
            return AssayCodec.decode(reply.get("value"), self.getGenericReturnType(), 0);
        } catch (RuntimeException | StackOverflowError error) {
            throw fail("candidate_error", "TypeError", "the value " + name + " returned does not decode as "
                + self.getGenericReturnType().getTypeName() + ": " + error.getMessage());
        }
    }

    private static void handshake() {
        Map<String, Object> first;
        try {
            first = receive(64L * 1024 * 1024);
            if ("compiled".equals(first.get("event"))) {
                Map<String, Object> run = new LinkedHashMap<>();
                run.put("event", "run");
                write(calls, run);
                first = receive(64L * 1024 * 1024);
            }
        } catch (IOException | RuntimeException error) {
            Map<String, Object> fields = fields("ended", "CandidateEnded",
                "the candidate's process ended before it was ready (" + error.getMessage() + ")");
            fields.put("stage", "load");
            verdict(false, fields);
            return;
        }
        if ("ready".equals(first.get("event"))) return;
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("stage", "load");
        for (String key : new String[] {"kind", "error_type", "message", "traceback"}) {
            Object value = first.get(key);
            fields.put(key, value instanceof String ? value : "");
        }
        verdict(false, fields);
    }

    private static void testLine(Throwable error, String file, int offset, Map<String, Object> fields) {
        for (StackTraceElement element : error.getStackTrace()) {
            if (!file.equals(element.getFileName()) || element.getLineNumber() <= offset) continue;
            int line = element.getLineNumber() - offset;
            fields.put("line", (long) line);
            try {
                List<String> lines = Files.readAllLines(Paths.get(file), StandardCharsets.UTF_8);
                fields.put("source", lines.get(element.getLineNumber() - 1).trim());
            } catch (IOException | IndexOutOfBoundsException missing) {
                // the line number alone
            }
            return;
        }
    }

    private static Map<String, Object> fields(String kind, String type, String message) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kind", kind);
        out.put("error_type", type);
        out.put("message", message);
        return out;
    }

    /** Ends the process (halt: no shutdown hook of the test runs after the verdict). */
    private static RuntimeException fail(String kind, String type, String message) {
        verdict(false, fields(kind, type, message));
        return new IllegalStateException("unreachable");
    }

    private static void verdict(boolean passed, Map<String, Object> fields) {
        System.out.flush();
        System.err.flush();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("passed", passed);
        if (!passed && !fields.containsKey("stage")) out.put("stage", "test");
        out.put("calls", callCount);
        Map<String, Object> time = new LinkedHashMap<>();
        time.put("wall_ms", wallMs);
        time.put("cpu_ms", cpuMs);
        out.put("time", time);
        out.putAll(fields);
        try {
            write(verdicts, out);
        } catch (IOException | RuntimeException error) {
            Runtime.getRuntime().halt(70);
        }
        Runtime.getRuntime().halt(0);
    }

    private static void addTime(Object spent) {
        if (!(spent instanceof Map)) return;
        Object wall = ((Map<?, ?>) spent).get("wall_ms"), cpu = ((Map<?, ?>) spent).get("cpu_ms");
        wallMs += amount(wall);
        cpuMs += amount(cpu);
    }

    private static double amount(Object value) {
        if (!(value instanceof Number)) return 0;
        double number = ((Number) value).doubleValue();
        return Double.isFinite(number) && number >= 0 ? number : 0;
    }

    /** The inherited pipe itself: a pipe of another uid cannot be reopened through /proc. */
    private static FileDescriptor descriptor(int number) throws ReflectiveOperationException {
        FileDescriptor descriptor = new FileDescriptor();
        Field field = FileDescriptor.class.getDeclaredField("fd"); // --add-opens java.base/java.io
        field.setAccessible(true);
        field.setInt(descriptor, number);
        return descriptor;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> receive(long limit) throws IOException {
        int length;
        try {
            length = replies.readInt();
        } catch (EOFException end) {
            throw new IOException("the candidate's process ended during a call");
        }
        if (length < 0 || length > limit) {
            throw new IOException("the candidate's reply of " + Integer.toUnsignedString(length)
                + " bytes exceeds the " + limit + "-byte limit");
        }
        byte[] body = new byte[length];
        try {
            replies.readFully(body);
        } catch (EOFException end) {
            throw new IOException("the candidate's process ended inside a reply");
        }
        Object frame = AssayJson.parse(new String(body, StandardCharsets.UTF_8));
        if (!(frame instanceof Map)) throw new IOException("the candidate sent a frame that is not an object");
        return (Map<String, Object>) frame;
    }

    private static void write(OutputStream out, Map<String, Object> message) throws IOException {
        AssayJson.writeFrame(out, message);
    }
}
