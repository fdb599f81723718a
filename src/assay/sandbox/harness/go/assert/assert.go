// Package assert is a small stand-in for testify's assert package, with the semantics of
// the calls HumanEval-X style Go tests make (Equal is reflect.DeepEqual after testify's
// []byte and nil rules, EqualValues converts, and so on). The test program's checker
// installs it under testify's import path, so such tests compile unchanged and offline.
// AssayOnFailure, set by the checker, hears of each failed assertion as it happens.
package assert

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
)

// TestingT is what the assertions need of a *testing.T.
type TestingT interface {
	Errorf(format string, args ...interface{})
}

type helper interface{ Helper() }

type failNower interface{ FailNow() }

// AssayOnFailure is called with the assertion's name and message before the test is told.
var AssayOnFailure func(assertion string, message string)

// Fail reports a failed assertion.
func Fail(t TestingT, failure string, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	message := failure
	if extra := messageFrom(msgAndArgs); extra != "" {
		message += "\nMessages: " + extra
	}
	if AssayOnFailure != nil {
		AssayOnFailure(callerAssertion(), message)
	}
	t.Errorf("\n%s", message)
	return false
}

// FailNow reports a failed assertion and stops the test.
func FailNow(t TestingT, failure string, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	Fail(t, failure, msgAndArgs...)
	if f, ok := t.(failNower); ok {
		f.FailNow()
	}
	return false
}

func messageFrom(msgAndArgs []interface{}) string {
	switch len(msgAndArgs) {
	case 0:
		return ""
	case 1:
		if text, ok := msgAndArgs[0].(string); ok {
			return text
		}
		return fmt.Sprintf("%+v", msgAndArgs[0])
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

// callerAssertion is the name of the assertion the test called ("Equal", ...): the
// outermost frame of this package.
func callerAssertion() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	name := "Fail"
	for {
		frame, more := frames.Next()
		if strings.HasPrefix(frame.Function, packagePath+".") {
			parts := strings.Split(frame.Function, ".")
			name = parts[len(parts)-1]
		}
		if !more {
			return name
		}
	}
}

const packagePath = "github.com/stretchr/testify/assert"

// ObjectsAreEqual is testify's equality: reflect.DeepEqual, with []byte compared by content.
func ObjectsAreEqual(expected, actual interface{}) bool {
	if expected == nil || actual == nil {
		return expected == actual
	}
	exp, ok := expected.([]byte)
	if !ok {
		return reflect.DeepEqual(expected, actual)
	}
	act, ok := actual.([]byte)
	if !ok {
		return false
	}
	if exp == nil || act == nil {
		return exp == nil && act == nil
	}
	return bytes.Equal(exp, act)
}

// ObjectsAreEqualValues is equality after converting expected to actual's type.
func ObjectsAreEqualValues(expected, actual interface{}) bool {
	if ObjectsAreEqual(expected, actual) {
		return true
	}
	actualType := reflect.TypeOf(actual)
	if actualType == nil {
		return false
	}
	value := reflect.ValueOf(expected)
	if value.IsValid() && value.Type().ConvertibleTo(actualType) {
		return reflect.DeepEqual(value.Convert(actualType).Interface(), actual)
	}
	return false
}

func describe(value interface{}) string {
	if value == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%#v", value)
}

// notEqualMessage shows the types too when they differ (int(3) against int64(3)).
func notEqualMessage(expected, actual interface{}) string {
	shownExpected, shownActual := describe(expected), describe(actual)
	if expected != nil && actual != nil && reflect.TypeOf(expected) != reflect.TypeOf(actual) {
		shownExpected = fmt.Sprintf("%T(%s)", expected, shownExpected)
		shownActual = fmt.Sprintf("%T(%s)", actual, shownActual)
	}
	return fmt.Sprintf("Not equal: \nexpected: %s\nactual  : %s", shownExpected, shownActual)
}

func isFunction(value interface{}) bool {
	return value != nil && reflect.TypeOf(value).Kind() == reflect.Func
}

// Equal asserts that two objects are equal (same type, same content).
func Equal(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if isFunction(expected) || isFunction(actual) {
		return Fail(t, fmt.Sprintf("Invalid operation: %#v == %#v (cannot take func type as argument)", expected, actual), msgAndArgs...)
	}
	if !ObjectsAreEqual(expected, actual) {
		return Fail(t, notEqualMessage(expected, actual), msgAndArgs...)
	}
	return true
}

// Exactly is Equal: the types must match too.
func Exactly(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if reflect.TypeOf(expected) != reflect.TypeOf(actual) {
		return Fail(t, fmt.Sprintf("Types expected to match exactly\n\t%T != %T", expected, actual), msgAndArgs...)
	}
	return Equal(t, expected, actual, msgAndArgs...)
}

// NotEqual asserts that two objects differ.
func NotEqual(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if ObjectsAreEqual(expected, actual) {
		return Fail(t, fmt.Sprintf("Should not be: %s", describe(actual)), msgAndArgs...)
	}
	return true
}

// EqualValues asserts equality after converting expected to actual's type.
func EqualValues(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if !ObjectsAreEqualValues(expected, actual) {
		return Fail(t, notEqualMessage(expected, actual), msgAndArgs...)
	}
	return true
}

// True asserts that value is true.
func True(t TestingT, value bool, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if !value {
		return Fail(t, "Should be true", msgAndArgs...)
	}
	return true
}

// False asserts that value is false.
func False(t TestingT, value bool, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if value {
		return Fail(t, "Should be false", msgAndArgs...)
	}
	return true
}

func isNil(object interface{}) bool {
	if object == nil {
		return true
	}
	value := reflect.ValueOf(object)
	switch value.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Ptr, reflect.Slice, reflect.UnsafePointer:
		return value.IsNil()
	}
	return false
}

// Nil asserts that object is nil.
func Nil(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if !isNil(object) {
		return Fail(t, "Expected nil, but got: "+describe(object), msgAndArgs...)
	}
	return true
}

// NotNil asserts that object is not nil.
func NotNil(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if isNil(object) {
		return Fail(t, "Expected value not to be nil.", msgAndArgs...)
	}
	return true
}

func isEmpty(object interface{}) bool {
	if object == nil {
		return true
	}
	value := reflect.ValueOf(object)
	switch value.Kind() {
	case reflect.Chan, reflect.Map, reflect.Slice:
		return value.Len() == 0
	case reflect.Ptr:
		if value.IsNil() {
			return true
		}
		return isEmpty(value.Elem().Interface())
	}
	return reflect.DeepEqual(object, reflect.Zero(value.Type()).Interface())
}

// Empty asserts that object is its zero value, or has no items.
func Empty(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if !isEmpty(object) {
		return Fail(t, "Should be empty, but was "+describe(object), msgAndArgs...)
	}
	return true
}

// NotEmpty asserts the opposite of Empty.
func NotEmpty(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if isEmpty(object) {
		return Fail(t, "Should NOT be empty, but was "+describe(object), msgAndArgs...)
	}
	return true
}

// Zero asserts that i is the zero value of its type.
func Zero(t TestingT, i interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if i != nil && !reflect.DeepEqual(i, reflect.Zero(reflect.TypeOf(i)).Interface()) {
		return Fail(t, "Should be zero, but was "+describe(i), msgAndArgs...)
	}
	return true
}

// NotZero asserts that i is not the zero value of its type.
func NotZero(t TestingT, i interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if i == nil || reflect.DeepEqual(i, reflect.Zero(reflect.TypeOf(i)).Interface()) {
		return Fail(t, "Should not be zero, but was "+describe(i), msgAndArgs...)
	}
	return true
}

func length(object interface{}) (n int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return reflect.ValueOf(object).Len(), true
}

// Len asserts that object has n items.
func Len(t TestingT, object interface{}, n int, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	size, ok := length(object)
	if !ok {
		return Fail(t, fmt.Sprintf("\"%v\" could not be applied builtin len()", object), msgAndArgs...)
	}
	if size != n {
		return Fail(t, fmt.Sprintf("\"%v\" should have %d item(s), but has %d", object, n, size), msgAndArgs...)
	}
	return true
}

// contains: a substring, a slice or array item, or a map key.
func contains(list interface{}, element interface{}) (ok, found bool) {
	value := reflect.ValueOf(list)
	if value.Kind() == reflect.String {
		item := reflect.ValueOf(element)
		return item.Kind() == reflect.String, item.Kind() == reflect.String && strings.Contains(value.String(), item.String())
	}
	switch value.Kind() {
	case reflect.Map:
		for _, key := range value.MapKeys() {
			if ObjectsAreEqual(key.Interface(), element) {
				return true, true
			}
		}
		return true, false
	case reflect.Slice, reflect.Array:
		for i := 0; i < value.Len(); i++ {
			if ObjectsAreEqual(value.Index(i).Interface(), element) {
				return true, true
			}
		}
		return true, false
	}
	return false, false
}

// Contains asserts that s holds contains (a substring, an item, a key).
func Contains(t TestingT, s, contains_ interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	ok, found := contains(s, contains_)
	if !ok {
		return Fail(t, fmt.Sprintf("%#v could not be applied builtin len()", s), msgAndArgs...)
	}
	if !found {
		return Fail(t, fmt.Sprintf("%#v does not contain %#v", s, contains_), msgAndArgs...)
	}
	return true
}

// NotContains asserts the opposite of Contains.
func NotContains(t TestingT, s, contains_ interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	ok, found := contains(s, contains_)
	if !ok {
		return Fail(t, fmt.Sprintf("%#v could not be applied builtin len()", s), msgAndArgs...)
	}
	if found {
		return Fail(t, fmt.Sprintf("%#v should not contain %#v", s, contains_), msgAndArgs...)
	}
	return true
}

// ElementsMatch asserts that two lists hold the same items, in any order.
func ElementsMatch(t TestingT, listA, listB interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if isEmpty(listA) && isEmpty(listB) {
		return true
	}
	a, b := reflect.ValueOf(listA), reflect.ValueOf(listB)
	isList := func(v reflect.Value) bool { return v.Kind() == reflect.Slice || v.Kind() == reflect.Array }
	if !isList(a) || !isList(b) {
		return Fail(t, fmt.Sprintf("%#v and %#v must be lists", listA, listB), msgAndArgs...)
	}
	used := make([]bool, b.Len())
	matched := a.Len() == b.Len()
	for i := 0; matched && i < a.Len(); i++ {
		found := false
		for j := 0; j < b.Len(); j++ {
			if !used[j] && ObjectsAreEqual(a.Index(i).Interface(), b.Index(j).Interface()) {
				used[j], found = true, true
				break
			}
		}
		matched = found
	}
	if !matched {
		return Fail(t, fmt.Sprintf("elements differ\nlistA: %#v\nlistB: %#v", listA, listB), msgAndArgs...)
	}
	return true
}

func toFloat(x interface{}) (float64, bool) {
	value := reflect.ValueOf(x)
	switch value.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(value.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(value.Uint()), true
	case reflect.Float32, reflect.Float64:
		return value.Float(), true
	}
	return 0, false
}

// InDelta asserts that two numbers are within delta of each other.
func InDelta(t TestingT, expected, actual interface{}, delta float64, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	a, okA := toFloat(expected)
	b, okB := toFloat(actual)
	if !okA || !okB {
		return Fail(t, "Parameters must be numerical", msgAndArgs...)
	}
	if math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.Abs(a-b) > delta || math.IsNaN(a-b) {
		return Fail(t, fmt.Sprintf("Max difference between %v and %v allowed is %v, but difference was %v", expected, actual, delta, a-b), msgAndArgs...)
	}
	return true
}

// InEpsilon asserts that the relative error between two numbers is below epsilon.
func InEpsilon(t TestingT, expected, actual interface{}, epsilon float64, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	a, okA := toFloat(expected)
	b, okB := toFloat(actual)
	if !okA || !okB || a == 0 {
		return Fail(t, "Parameters must be numerical, and expected must not be zero", msgAndArgs...)
	}
	if relative := math.Abs(a-b) / math.Abs(a); math.IsNaN(relative) || relative > epsilon {
		return Fail(t, fmt.Sprintf("Relative error is too high: %#v (expected)\n        < %#v (actual)", epsilon, relative), msgAndArgs...)
	}
	return true
}

// compare orders two values of the same ordered type: -1, 0, 1, or ok false.
func compare(a, b interface{}) (int, bool) {
	x, y := reflect.ValueOf(a), reflect.ValueOf(b)
	if !x.IsValid() || !y.IsValid() || x.Type() != y.Type() {
		return 0, false
	}
	sign := func(less, greater bool) int {
		if less {
			return -1
		}
		if greater {
			return 1
		}
		return 0
	}
	switch x.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return sign(x.Int() < y.Int(), x.Int() > y.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return sign(x.Uint() < y.Uint(), x.Uint() > y.Uint()), true
	case reflect.Float32, reflect.Float64:
		return sign(x.Float() < y.Float(), x.Float() > y.Float()), true
	case reflect.String:
		return sign(x.String() < y.String(), x.String() > y.String()), true
	}
	return 0, false
}

func ordered(t TestingT, a, b interface{}, allowed func(int) bool, words string, msgAndArgs []interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	order, ok := compare(a, b)
	if !ok {
		return Fail(t, fmt.Sprintf("Elements should be the same ordered type: %T, %T", a, b), msgAndArgs...)
	}
	if !allowed(order) {
		return Fail(t, fmt.Sprintf("\"%v\" is not %s \"%v\"", a, words, b), msgAndArgs...)
	}
	return true
}

// Greater asserts that e1 > e2.
func Greater(t TestingT, e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	return ordered(t, e1, e2, func(o int) bool { return o > 0 }, "greater than", msgAndArgs)
}

// GreaterOrEqual asserts that e1 >= e2.
func GreaterOrEqual(t TestingT, e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	return ordered(t, e1, e2, func(o int) bool { return o >= 0 }, "greater than or equal to", msgAndArgs)
}

// Less asserts that e1 < e2.
func Less(t TestingT, e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	return ordered(t, e1, e2, func(o int) bool { return o < 0 }, "less than", msgAndArgs)
}

// LessOrEqual asserts that e1 <= e2.
func LessOrEqual(t TestingT, e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	return ordered(t, e1, e2, func(o int) bool { return o <= 0 }, "less than or equal to", msgAndArgs)
}

// Error asserts that err is not nil.
func Error(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if err == nil {
		return Fail(t, "An error is expected but got nil.", msgAndArgs...)
	}
	return true
}

// NoError asserts that err is nil.
func NoError(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if err != nil {
		return Fail(t, fmt.Sprintf("Received unexpected error:\n%+v", err), msgAndArgs...)
	}
	return true
}

// EqualError asserts that err's message is errString.
func EqualError(t TestingT, err error, errString string, msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	if !Error(t, err, msgAndArgs...) {
		return false
	}
	if err.Error() != errString {
		return Fail(t, fmt.Sprintf("Error message not equal:\nexpected: %q\nactual  : %q", errString, err.Error()), msgAndArgs...)
	}
	return true
}

// Panics asserts that f panics.
func Panics(t TestingT, f func(), msgAndArgs ...interface{}) (ok bool) {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	panicked := func() (did bool) {
		defer func() {
			if recover() != nil {
				did = true
			}
		}()
		f()
		return false
	}()
	if !panicked {
		return Fail(t, fmt.Sprintf("func %#v should panic", f), msgAndArgs...)
	}
	return true
}

// NotPanics asserts that f does not panic.
func NotPanics(t TestingT, f func(), msgAndArgs ...interface{}) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // failures point at the test's line
	}
	var recovered interface{}
	func() {
		defer func() { recovered = recover() }()
		f()
	}()
	if recovered != nil {
		return Fail(t, fmt.Sprintf("func %#v should not panic\n\tPanic value:\t%v", f, recovered), msgAndArgs...)
	}
	return true
}
