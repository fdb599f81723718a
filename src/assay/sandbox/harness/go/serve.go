package main

// The candidate's process: answer each call frame by calling the function through
// reflection; arguments are decoded to the declared parameter types.

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

var assayErrorType = reflect.TypeOf((*error)(nil)).Elem()

func assayServe(function reflect.Value) {
	if function.Kind() != reflect.Func {
		assayWriteFrame(map[string]interface{}{"event": "load_error", "kind": "missing_function",
			"error_type": "NameError", "message": fmt.Sprintf("the entry point is a %s, not a function", function.Type()), "traceback": ""})
		return
	}
	// Calls run on this goroutine, locked to one OS thread: that thread's CPU clock is
	// the call's CPU time (work of other goroutines and of the collector is not counted).
	runtime.LockOSThread()
	if err := assayWriteFrame(map[string]interface{}{"event": "ready"}); err != nil {
		os.Exit(70)
	}
	for {
		call, more, err := assayReadFrame()
		if err != nil {
			fmt.Fprintf(os.Stderr, "assay harness: %v\n", err)
			os.Exit(70)
		}
		if !more {
			return
		}
		os.Stdout.Sync()
		if err := assayWriteFrame(assayAnswer(function, call)); err != nil {
			os.Exit(70)
		}
	}
}

func assayFailure(kind string, message string, trace string) map[string]interface{} {
	return map[string]interface{}{"ok": false, "error_type": kind, "message": message, "traceback": trace}
}

func assayAnswer(function reflect.Value, call interface{}) (reply map[string]interface{}) {
	frame, _ := call.(map[string]interface{})
	args, err := assayArguments(function.Type(), frame)
	if err != nil {
		return assayFailure("TypeError", err.Error(), "")
	}
	var spent map[string]interface{}
	clock := assayStartClock()
	defer func() {
		if recovered := recover(); recovered != nil {
			kind := "panic"
			if _, isRuntime := recovered.(interface{ RuntimeError() }); isRuntime {
				kind = "runtime.Error"
			}
			reply = assayFailure(kind, fmt.Sprint(recovered), assayStack())
		}
		if spent == nil { // it panicked: the time up to the panic
			spent = clock.elapsed()
		}
		reply["time"] = spent
	}()
	results := function.Call(args)
	spent = clock.elapsed()
	return assayResults(function.Type(), results)
}

// assayClock: the reply's `time` field, the same in every language: the call alone (not
// decoding its arguments nor encoding its value), in milliseconds.
type assayClock struct {
	wall time.Time
	cpu  int64
}

func assayStartClock() assayClock {
	return assayClock{time.Now(), assayThreadCPU()}
}

func (c assayClock) elapsed() map[string]interface{} {
	wall := float64(time.Since(c.wall).Nanoseconds()) / 1e6
	return map[string]interface{}{"wall_ms": wall, "cpu_ms": float64(assayThreadCPU()-c.cpu) / 1e6}
}

// assayThreadCPU is CLOCK_THREAD_CPUTIME_ID of the calling (locked) thread, nanoseconds.
func assayThreadCPU() int64 {
	var now syscall.Timespec
	const threadCPUClock = 3 // CLOCK_THREAD_CPUTIME_ID
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, threadCPUClock, uintptr(unsafe.Pointer(&now)), 0)
	return now.Nano()
}

func assayArguments(t reflect.Type, frame map[string]interface{}) ([]reflect.Value, error) {
	if tag, body := assayTagged(frame["kwargs"]); tag == "$dict" && len(body.([]interface{})) > 0 {
		return nil, fmt.Errorf("Go functions take positional arguments only")
	}
	items, ok := frame["args"].([]interface{})
	if !ok {
		return nil, fmt.Errorf("malformed call")
	}
	fixed := t.NumIn()
	if t.IsVariadic() {
		fixed--
	}
	if len(items) < fixed || (!t.IsVariadic() && len(items) != fixed) {
		return nil, fmt.Errorf("the function takes %d arguments, got %d", t.NumIn(), len(items))
	}
	args := make([]reflect.Value, len(items))
	for i, item := range items {
		parameter := t.In(assayMin(i, t.NumIn()-1))
		if t.IsVariadic() && i >= fixed {
			parameter = parameter.Elem()
		}
		value, err := assayDecode(item, parameter, 0)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %v", i, err)
		}
		args[i] = value
	}
	return args, nil
}

// A trailing error result is Go's way to fail: non-nil is a raised error, and the
// value is the other results (one: itself; several: a tuple).
func assayResults(t reflect.Type, results []reflect.Value) map[string]interface{} {
	if n := len(results); n > 0 && t.Out(n-1) == assayErrorType {
		if !results[n-1].IsNil() {
			err := results[n-1].Interface().(error)
			return assayFailure(fmt.Sprintf("%T", err), err.Error(), "")
		}
		results = results[:n-1]
	}
	var encoded interface{}
	var err error
	switch len(results) {
	case 0:
		encoded = nil
	case 1:
		encoded, err = assayEncode(results[0], 0)
	default:
		items := make([]interface{}, len(results))
		for i, result := range results {
			if items[i], err = assayEncode(result, 0); err != nil {
				break
			}
		}
		encoded = map[string]interface{}{"$tuple": items}
	}
	if err != nil {
		return assayFailure("UnsupportedReturnValue", "the return value cannot leave the sandbox: "+err.Error(), "")
	}
	return map[string]interface{}{"ok": true, "value": encoded}
}

func assayMin(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// assayStack is the panic's stack without the harness's and the runtime's frames.
func assayStack() string {
	lines := strings.Split(string(debug.Stack()), "\n")
	kept := []string{}
	for i := 1; i+1 < len(lines); i += 2 {
		function, place := lines[i], lines[i+1]
		if strings.Contains(place, "solution.go") {
			kept = append(kept, function, place)
		}
	}
	return strings.Join(kept, "\n")
}
