package main

// The test program's process, built with `go test -c` (this file becomes
// assay_checker_test.go): TestMain waits for the candidate, runs the Test functions
// against the typed proxy of the entry point (assay_proxy.go, which calls assayCall),
// and sends the verdict to the parent on descriptor 4. The candidate's process is at
// the other end of descriptors 5 (calls) and 6 (replies).

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

const (
	assayTestFile   = "program_test.go"  // the test as compiled (a header on its first line)
	assayTestSource = "program_test.txt" // the test as written, for the failing line's text
)

var (
	assayToCandidate   = os.NewFile(5, "candidate-calls")
	assayFromCandidate = os.NewFile(6, "candidate-replies")
	assayValueLimit    = uint32(assayMaxFrame)
	assayState         struct {
		sync.Mutex
		calls int
		ended bool                   // the candidate's process is gone: later calls fail at once
		first map[string]interface{} // the first failure decides the verdict
		time  map[string]float64
	}
)

// assayCandidateFailure ends a test after a candidate-side failure was recorded.
type assayCandidateFailure struct{}

// assayReturnedError is the candidate's own non-nil error, for a trailing error result.
type assayReturnedError struct{ kind, message string }

func (e assayReturnedError) Error() string { return e.message }

func TestMain(m *testing.M) {
	if limit, err := strconv.ParseUint(os.Getenv("ASSAY_MAX_VALUE_BYTES"), 10, 32); err == nil && limit > 0 {
		assayValueLimit = uint32(limit)
	}
	assayState.time = map[string]float64{"wall_ms": 0, "cpu_ms": 0}
	if verdict := assayHandshake(); verdict != nil {
		assayFinish(verdict)
	}
	// both sides are built: the parent starts the test's clock, then gives the go-ahead
	// (so that the verdict never arrives together with this frame)
	assayWriteFrame(map[string]interface{}{"event": "started"})
	if _, more, err := assayReadFrame(); err != nil || !more {
		os.Exit(0)
	}
	assert.AssayOnFailure = func(name, message string) {
		assayRecord("assertion", "assert."+name, message)
	}
	code, output := assayRunCapturing(m)
	assayFinish(assayVerdict(code, output))
}

// assayRunCapturing runs the tests with their output in a file (to find a t.Errorf's
// line), then copies it to the real stdout.
func assayRunCapturing(m *testing.M) (int, string) {
	stdout := os.Stdout
	file, err := os.CreateTemp(".", "test-output-")
	if err != nil {
		return m.Run(), ""
	}
	os.Stdout = file
	code := m.Run()
	os.Stdout = stdout
	file.Close()
	data, _ := os.ReadFile(file.Name())
	os.Remove(file.Name())
	stdout.Write(data)
	return code, string(data)
}

func assayFinish(verdict map[string]interface{}) {
	assayWriteFrame(verdict)
	os.Exit(0)
}

// assayHandshake: a compiled candidate says "compiled" and waits for "run"; then it
// says "ready", or why it could not load. A verdict is returned when it cannot be tested.
func assayHandshake() map[string]interface{} {
	first, more, err := assayReadFrameFrom(assayFromCandidate, assayValueLimit)
	if err == nil && more && assayEvent(first) == "compiled" {
		if assayWriteFrameTo(assayToCandidate, map[string]interface{}{"event": "run"}) == nil {
			first, more, err = assayReadFrameFrom(assayFromCandidate, assayValueLimit)
		}
	}
	if err != nil || !more {
		return map[string]interface{}{"passed": false, "stage": "load", "kind": "ended",
			"message": "the candidate's process ended before it was ready"}
	}
	if assayEvent(first) == "ready" {
		return nil
	}
	report, _ := first.(map[string]interface{})
	verdict := map[string]interface{}{"passed": false, "stage": "load", "kind": "exception"}
	for _, key := range []string{"kind", "error_type", "message", "traceback"} {
		if text, ok := report[key].(string); ok {
			verdict[key] = text
		}
	}
	return verdict
}

func assayEvent(frame interface{}) string {
	object, _ := frame.(map[string]interface{})
	event, _ := object["event"].(string)
	return event
}

// assayCall sends one call with the arguments as declared and decodes the reply into
// results (pointers to the declared result values). It returns the candidate's own
// error when the declaration ends in error; any other failure ends the test.
func assayCall(args []interface{}, variadic bool, results []interface{}, returnsError bool) error {
	assayState.Lock()
	defer assayState.Unlock() // one call at a time, even from parallel tests
	assayState.calls++
	if assayState.ended {
		assayFailLocked("candidate_ended", "CandidateEnded", "the candidate's process had already ended")
	}
	encoded, err := assayEncodeArguments(args, variadic)
	if err != nil {
		assayFailLocked("exception", "TypeError", "the test passed an argument that cannot be sent: "+err.Error())
	}
	call := map[string]interface{}{"args": encoded, "kwargs": map[string]interface{}{"$dict": []interface{}{}}}
	if err := assayWriteFrameTo(assayToCandidate, call); err != nil {
		assayEndedLocked("the candidate's process ended (" + err.Error() + ")")
	}
	frame, more, err := assayReadFrameFrom(assayFromCandidate, assayValueLimit)
	if err != nil {
		assayEndedLocked("the candidate sent malformed data or too much of it (" + err.Error() + ")")
	}
	if !more {
		assayEndedLocked("the candidate's process ended during a call")
	}
	reply, _ := frame.(map[string]interface{})
	ok, isReply := reply["ok"].(bool)
	if !isReply {
		assayFailLocked("candidate_error", "MalformedReply", "the candidate's reply frame has no boolean `ok` field")
	}
	assayAddTime(reply["time"])
	if !ok {
		kind, _ := reply["error_type"].(string)
		message, _ := reply["message"].(string)
		if returnsError && !assayHarnessErrors[kind] {
			return assayReturnedError{kind, message}
		}
		assayFailLocked("candidate_error", kind, message)
	}
	if err := assayDecodeResults(reply["value"], results); err != nil {
		assayFailLocked("candidate_error", "DecodeError", "the candidate's result does not fit the declaration: "+err.Error())
	}
	return nil
}

// the failures the candidate's harness reports itself: never a returned error
var assayHarnessErrors = map[string]bool{
	"panic": true, "runtime.Error": true, "TypeError": true, "UnsupportedReturnValue": true, "": true,
}

func assayEncodeArguments(args []interface{}, variadic bool) ([]interface{}, error) {
	encoded := []interface{}{}
	for i, arg := range args {
		value := reflect.ValueOf(arg)
		if variadic && i == len(args)-1 {
			for j := 0; j < value.Len(); j++ { // spread, as the call site wrote them
				item, err := assayEncode(value.Index(j), 0)
				if err != nil {
					return nil, err
				}
				encoded = append(encoded, item)
			}
			continue
		}
		item, err := assayEncode(value, 0)
		if err != nil {
			return nil, err
		}
		encoded = append(encoded, item)
	}
	return encoded, nil
}

func assayDecodeResults(data interface{}, results []interface{}) error {
	items := []interface{}{data}
	if len(results) > 1 {
		tag, body := assayTagged(data)
		list, ok := body.([]interface{})
		if tag != "$tuple" || !ok || len(list) != len(results) {
			return fmt.Errorf("%d results were declared, the reply holds %s", len(results), assayDescribe(data))
		}
		items = list
	}
	for i, target := range results {
		slot := reflect.ValueOf(target).Elem()
		value, err := assayDecode(items[i], slot.Type(), 0)
		if err != nil {
			return err
		}
		slot.Set(value)
	}
	return nil
}

func assayAddTime(spent interface{}) {
	object, _ := spent.(map[string]interface{})
	for key := range assayState.time {
		if number, ok := assayFloatOf(object[key]); ok && number >= 0 && number < 1e12 {
			assayState.time[key] += number
		}
	}
}

func assayEndedLocked(message string) {
	assayState.ended = true
	assayFailLocked("candidate_ended", "CandidateEnded", message)
}

func assayFailLocked(kind, errorType, message string) {
	assayRecordLocked(kind, errorType, message)
	panic(assayCandidateFailure{})
}

func assayRecord(kind, errorType, message string) {
	assayState.Lock()
	defer assayState.Unlock()
	assayRecordLocked(kind, errorType, message)
}

// assayRecordLocked keeps the first failure, with the test's line and function.
func assayRecordLocked(kind, errorType, message string) {
	if assayState.first != nil {
		return
	}
	failure := map[string]interface{}{"kind": kind, "error_type": errorType, "message": message}
	if line, test := assayTestFrame(); line > 0 {
		failure["line"], failure["test"] = line, test
	}
	assayState.first = failure
}

// assayTestFrame: the innermost frame in the test program (its line and Test function).
func assayTestFrame() (int, string) {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	for {
		frame, more := frames.Next()
		if filepath.Base(frame.File) == assayTestFile {
			return frame.Line, assayTestName(frame.Function)
		}
		if !more {
			return 0, ""
		}
	}
}

var assayTestNamePattern = regexp.MustCompile(`assayTest_(\w+?)(?:\.func\d+)*$`)

func assayTestName(function string) string {
	if match := assayTestNamePattern.FindStringSubmatch(function); match != nil {
		return match[1]
	}
	parts := strings.Split(function, ".")
	return parts[len(parts)-1]
}

// assayRecover runs deferred around each Test function: a panic in the test (or one
// that ended it after a candidate failure) fails that test, and the others still run.
func assayRecover(t *testing.T) {
	recovered := recover()
	if recovered == nil {
		return
	}
	if _, ours := recovered.(assayCandidateFailure); !ours {
		assayRecord("exception", "panic", fmt.Sprint(recovered))
	}
	t.Fail()
}

var assayReportedLine = regexp.MustCompile(`^\s+` + regexp.QuoteMeta(assayTestFile) + `:(\d+): ?(.*)$`)

// assayVerdict: passed when every Test passed and nothing failed on the way.
func assayVerdict(code int, output string) map[string]interface{} {
	assayState.Lock()
	defer assayState.Unlock()
	verdict := map[string]interface{}{"passed": false, "stage": "test", "calls": assayState.calls, "time": assayState.time}
	failure := assayState.first
	if failure == nil && code != 0 {
		failure = assayReportedFailure(output)
	}
	if failure == nil {
		verdict["passed"] = true
		return verdict
	}
	for key, value := range failure {
		verdict[key] = value
	}
	if line, ok := failure["line"].(int); ok {
		verdict["source"] = assaySourceLine(line)
	}
	return verdict
}

// assayReportedFailure: a test that failed through t.Error or t.Fatal, from its output.
func assayReportedFailure(output string) map[string]interface{} {
	lines := strings.Split(output, "\n")
	for i, line := range lines {
		match := assayReportedLine.FindStringSubmatch(line)
		if match == nil {
			continue
		}
		number, _ := strconv.Atoi(match[1])
		message := []string{match[2]}
		for _, more := range lines[i+1:] {
			if !strings.HasPrefix(more, "        ") {
				break
			}
			message = append(message, strings.TrimSpace(more))
		}
		return map[string]interface{}{"kind": "assertion", "error_type": "testing.T", "line": number,
			"message": strings.TrimSpace(strings.Join(message, "\n"))}
	}
	head := output
	if len(head) > 2000 {
		head = head[:2000]
	}
	return map[string]interface{}{"kind": "exception", "error_type": "testing", "message": strings.TrimSpace(head)}
}

func assaySourceLine(number int) string {
	file, err := os.Open(assayTestSource)
	if err != nil {
		return ""
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; scanner.Scan(); line++ {
		if line == number {
			return strings.TrimSpace(scanner.Text())
		}
	}
	return ""
}
