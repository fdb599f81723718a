package assert

// Assertions are the same assertions bound to one test: assert := assert.New(t).
type Assertions struct {
	t TestingT
}

// New binds the assertions to t.
func New(t TestingT) *Assertions {
	return &Assertions{t: t}
}

// Fail is the package's Fail for the bound test.
func (a *Assertions) Fail(failure string, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Fail(a.t, failure, msgAndArgs...)
}

// FailNow is the package's FailNow for the bound test.
func (a *Assertions) FailNow(failure string, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return FailNow(a.t, failure, msgAndArgs...)
}

// Equal is the package's Equal for the bound test.
func (a *Assertions) Equal(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Equal(a.t, expected, actual, msgAndArgs...)
}

// Exactly is the package's Exactly for the bound test.
func (a *Assertions) Exactly(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Exactly(a.t, expected, actual, msgAndArgs...)
}

// NotEqual is the package's NotEqual for the bound test.
func (a *Assertions) NotEqual(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return NotEqual(a.t, expected, actual, msgAndArgs...)
}

// EqualValues is the package's EqualValues for the bound test.
func (a *Assertions) EqualValues(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return EqualValues(a.t, expected, actual, msgAndArgs...)
}

// True is the package's True for the bound test.
func (a *Assertions) True(value bool, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return True(a.t, value, msgAndArgs...)
}

// False is the package's False for the bound test.
func (a *Assertions) False(value bool, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return False(a.t, value, msgAndArgs...)
}

// Nil is the package's Nil for the bound test.
func (a *Assertions) Nil(object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Nil(a.t, object, msgAndArgs...)
}

// NotNil is the package's NotNil for the bound test.
func (a *Assertions) NotNil(object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return NotNil(a.t, object, msgAndArgs...)
}

// Empty is the package's Empty for the bound test.
func (a *Assertions) Empty(object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Empty(a.t, object, msgAndArgs...)
}

// NotEmpty is the package's NotEmpty for the bound test.
func (a *Assertions) NotEmpty(object interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return NotEmpty(a.t, object, msgAndArgs...)
}

// Zero is the package's Zero for the bound test.
func (a *Assertions) Zero(i interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Zero(a.t, i, msgAndArgs...)
}

// NotZero is the package's NotZero for the bound test.
func (a *Assertions) NotZero(i interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return NotZero(a.t, i, msgAndArgs...)
}

// Len is the package's Len for the bound test.
func (a *Assertions) Len(object interface{}, n int, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Len(a.t, object, n, msgAndArgs...)
}

// Contains is the package's Contains for the bound test.
func (a *Assertions) Contains(s, contains_ interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Contains(a.t, s, contains_, msgAndArgs...)
}

// NotContains is the package's NotContains for the bound test.
func (a *Assertions) NotContains(s, contains_ interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return NotContains(a.t, s, contains_, msgAndArgs...)
}

// ElementsMatch is the package's ElementsMatch for the bound test.
func (a *Assertions) ElementsMatch(listA, listB interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return ElementsMatch(a.t, listA, listB, msgAndArgs...)
}

// InDelta is the package's InDelta for the bound test.
func (a *Assertions) InDelta(expected, actual interface{}, delta float64, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return InDelta(a.t, expected, actual, delta, msgAndArgs...)
}

// InEpsilon is the package's InEpsilon for the bound test.
func (a *Assertions) InEpsilon(expected, actual interface{}, epsilon float64, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return InEpsilon(a.t, expected, actual, epsilon, msgAndArgs...)
}

// Greater is the package's Greater for the bound test.
func (a *Assertions) Greater(e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Greater(a.t, e1, e2, msgAndArgs...)
}

// GreaterOrEqual is the package's GreaterOrEqual for the bound test.
func (a *Assertions) GreaterOrEqual(e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return GreaterOrEqual(a.t, e1, e2, msgAndArgs...)
}

// Less is the package's Less for the bound test.
func (a *Assertions) Less(e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Less(a.t, e1, e2, msgAndArgs...)
}

// LessOrEqual is the package's LessOrEqual for the bound test.
func (a *Assertions) LessOrEqual(e1, e2 interface{}, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return LessOrEqual(a.t, e1, e2, msgAndArgs...)
}

// Error is the package's Error for the bound test.
func (a *Assertions) Error(err error, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Error(a.t, err, msgAndArgs...)
}

// NoError is the package's NoError for the bound test.
func (a *Assertions) NoError(err error, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return NoError(a.t, err, msgAndArgs...)
}

// EqualError is the package's EqualError for the bound test.
func (a *Assertions) EqualError(err error, errString string, msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return EqualError(a.t, err, errString, msgAndArgs...)
}

// Panics is the package's Panics for the bound test.
func (a *Assertions) Panics(f func(), msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return Panics(a.t, f, msgAndArgs...)
}

// NotPanics is the package's NotPanics for the bound test.
func (a *Assertions) NotPanics(f func(), msgAndArgs ...interface{}) bool {
	if h, ok := a.t.(helper); ok {
		h.Helper()
	}
	return NotPanics(a.t, f, msgAndArgs...)
}
