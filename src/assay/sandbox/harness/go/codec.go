package main

// Go values <-> the tagged JSON codec (see ../codec.py and docs/code.md): decoding is
// driven by the Go type the function declares, encoding by the value's own type.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

const assayMaxDepth = 100
const assaySafeInt = 1 << 53

var assayBigIntType = reflect.TypeOf((*big.Int)(nil))

// assayFloat marshals with a decimal point, so 3.0 stays a float on the other side.
type assayFloat float64

func (f assayFloat) MarshalJSON() ([]byte, error) {
	text := strconv.FormatFloat(float64(f), 'g', -1, 64)
	if !strings.ContainsAny(text, ".eE") {
		text += ".0"
	}
	return []byte(text), nil
}

func assayTagged(data interface{}) (string, interface{}) {
	object, ok := data.(map[string]interface{})
	if !ok || len(object) != 1 {
		return "", nil
	}
	for tag, body := range object {
		return tag, body
	}
	return "", nil
}

func assayBigInteger(data interface{}) (*big.Int, bool) {
	switch value := data.(type) {
	case json.Number:
		number, ok := new(big.Int).SetString(string(value), 10)
		return number, ok
	}
	tag, body := assayTagged(data)
	text, isText := body.(string)
	if tag != "$int" || !isText {
		return nil, false
	}
	negative := strings.HasPrefix(text, "-")
	number, ok := new(big.Int).SetString(strings.TrimPrefix(text, "-"), 16)
	if ok && negative {
		number.Neg(number)
	}
	return number, ok
}

func assayFloatOf(data interface{}) (float64, bool) {
	if number, ok := data.(json.Number); ok {
		value, err := strconv.ParseFloat(string(number), 64)
		return value, err == nil
	}
	tag, body := assayTagged(data)
	if number, ok := body.(json.Number); ok && tag == "$float32" {
		value, err := strconv.ParseFloat(string(number), 64)
		return value, err == nil
	}
	if tag == "$float" {
		switch body {
		case "nan":
			return math.NaN(), true
		case "inf":
			return math.Inf(1), true
		case "-inf":
			return math.Inf(-1), true
		}
	}
	if number, ok := assayBigInteger(data); ok {
		value, _ := new(big.Float).SetInt(number).Float64()
		return value, true
	}
	return 0, false
}

func assaySequence(data interface{}) ([]interface{}, bool) {
	if list, ok := data.([]interface{}); ok {
		return list, true
	}
	tag, body := assayTagged(data)
	list, ok := body.([]interface{})
	return list, ok && (tag == "$tuple" || tag == "$set" || tag == "$frozenset")
}

func assayMismatch(data interface{}, t reflect.Type) error {
	return fmt.Errorf("cannot pass %s as a Go %s", assayDescribe(data), t)
}

func assayDescribe(data interface{}) string {
	switch data.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []interface{}:
		return "a list"
	}
	tag, _ := assayTagged(data)
	return "a " + strings.TrimPrefix(tag, "$")
}

// assayDecode turns encoded data into a value of type t.
func assayDecode(data interface{}, t reflect.Type, depth int) (reflect.Value, error) {
	if depth > assayMaxDepth {
		return reflect.Value{}, fmt.Errorf("value nested too deeply")
	}
	if t == assayBigIntType {
		number, ok := assayBigInteger(data)
		if !ok {
			return reflect.Value{}, assayMismatch(data, t)
		}
		return reflect.ValueOf(number), nil
	}
	result := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Interface:
		if data == nil {
			return result, nil
		}
		value, err := assayDecodeAny(data, depth)
		if err != nil {
			return result, err
		}
		if !reflect.TypeOf(value).AssignableTo(t) {
			return result, assayMismatch(data, t)
		}
		result.Set(reflect.ValueOf(value))
	case reflect.Ptr:
		if data == nil {
			return result, nil
		}
		inner, err := assayDecode(data, t.Elem(), depth+1)
		if err != nil {
			return result, err
		}
		pointer := reflect.New(t.Elem())
		pointer.Elem().Set(inner)
		return pointer, nil
	case reflect.Bool:
		value, ok := data.(bool)
		if !ok {
			return result, assayMismatch(data, t)
		}
		result.SetBool(value)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		number, ok := assayBigInteger(data)
		if !ok || !number.IsInt64() || result.OverflowInt(number.Int64()) {
			return result, assayRangeError(data, number, ok, t)
		}
		result.SetInt(number.Int64())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		number, ok := assayBigInteger(data)
		if !ok || !number.IsUint64() || result.OverflowUint(number.Uint64()) {
			return result, assayRangeError(data, number, ok, t)
		}
		result.SetUint(number.Uint64())
	case reflect.Float32, reflect.Float64:
		value, ok := assayFloatOf(data)
		if !ok {
			return result, assayMismatch(data, t)
		}
		result.SetFloat(value)
	case reflect.String:
		value, ok := data.(string)
		if !ok {
			return result, assayMismatch(data, t)
		}
		result.SetString(value)
	case reflect.Slice, reflect.Array:
		return assayDecodeList(data, t, result, depth)
	case reflect.Map:
		return assayDecodeMap(data, t, result, depth)
	case reflect.Struct:
		return assayDecodeStruct(data, t, result, depth)
	default:
		return result, fmt.Errorf("a Go %s cannot be passed as data", t)
	}
	return result, nil
}

func assayRangeError(data interface{}, number *big.Int, ok bool, t reflect.Type) error {
	if !ok {
		return assayMismatch(data, t)
	}
	return fmt.Errorf("%s does not fit in a Go %s", number, t)
}

func assayDecodeList(data interface{}, t reflect.Type, result reflect.Value, depth int) (reflect.Value, error) {
	if tag, body := assayTagged(data); tag == "$bytes" && t.Elem().Kind() == reflect.Uint8 {
		raw, err := base64.StdEncoding.DecodeString(fmt.Sprint(body))
		if err != nil {
			return result, err
		}
		data = make([]interface{}, len(raw))
		for i, b := range raw {
			data.([]interface{})[i] = json.Number(strconv.Itoa(int(b)))
		}
	}
	items, ok := assaySequence(data)
	if !ok {
		return result, assayMismatch(data, t)
	}
	if t.Kind() == reflect.Array {
		if len(items) != t.Len() {
			return result, fmt.Errorf("a Go %s needs %d items, got %d", t, t.Len(), len(items))
		}
	} else {
		result = reflect.MakeSlice(t, len(items), len(items))
	}
	for i, item := range items {
		value, err := assayDecode(item, t.Elem(), depth+1)
		if err != nil {
			return result, err
		}
		result.Index(i).Set(value)
	}
	return result, nil
}

func assayDecodeMap(data interface{}, t reflect.Type, result reflect.Value, depth int) (reflect.Value, error) {
	result = reflect.MakeMap(t)
	tag, body := assayTagged(data)
	items, _ := body.([]interface{})
	if tag == "$set" || tag == "$frozenset" {
		// a set is a map to bool (true) or to struct{}
		present := reflect.New(t.Elem()).Elem()
		if t.Elem().Kind() == reflect.Bool {
			present.SetBool(true)
		} else if !(t.Elem().Kind() == reflect.Struct && t.Elem().NumField() == 0) {
			return result, assayMismatch(data, t)
		}
		for _, item := range items {
			key, err := assayDecode(item, t.Key(), depth+1)
			if err != nil {
				return result, err
			}
			result.SetMapIndex(key, present)
		}
		return result, nil
	}
	if tag != "$dict" {
		return result, assayMismatch(data, t)
	}
	for _, item := range items {
		pair, ok := item.([]interface{})
		if !ok || len(pair) != 2 {
			return result, fmt.Errorf("malformed dict entry")
		}
		key, err := assayDecode(pair[0], t.Key(), depth+1)
		if err != nil {
			return result, err
		}
		value, err := assayDecode(pair[1], t.Elem(), depth+1)
		if err != nil {
			return result, err
		}
		result.SetMapIndex(key, value)
	}
	return result, nil
}

// assayFieldName is the json tag's name if there is one, else the field's name.
func assayFieldName(field reflect.StructField) string {
	if name := strings.Split(field.Tag.Get("json"), ",")[0]; name != "" && name != "-" {
		return name
	}
	return field.Name
}

func assayDecodeStruct(data interface{}, t reflect.Type, result reflect.Value, depth int) (reflect.Value, error) {
	tag, body := assayTagged(data)
	items, _ := body.([]interface{})
	if tag != "$dict" {
		return result, assayMismatch(data, t)
	}
	for _, item := range items {
		pair, ok := item.([]interface{})
		if !ok || len(pair) != 2 {
			return result, fmt.Errorf("malformed dict entry")
		}
		name, _ := pair[0].(string)
		index := -1
		for i := 0; i < t.NumField(); i++ {
			field := t.Field(i)
			if field.IsExported() && (assayFieldName(field) == name || strings.EqualFold(field.Name, name)) {
				index = i
				break
			}
		}
		if index < 0 {
			return result, fmt.Errorf("a Go %s has no exported field %q", t, name)
		}
		value, err := assayDecode(pair[1], t.Field(index).Type, depth+1)
		if err != nil {
			return result, err
		}
		result.Field(index).Set(value)
	}
	return result, nil
}

// assayDecodeAny decodes into interface{}: int64 (or *big.Int), float64, string, bool,
// []interface{}, map[string]interface{} (string keys) or map[interface{}]interface{}.
func assayDecodeAny(data interface{}, depth int) (interface{}, error) {
	if depth > assayMaxDepth {
		return nil, fmt.Errorf("value nested too deeply")
	}
	switch value := data.(type) {
	case nil, bool, string:
		return value, nil
	case json.Number:
		if number, err := strconv.ParseInt(string(value), 10, 64); err == nil {
			return number, nil
		}
		number, _ := assayFloatOf(value)
		return number, nil
	case []interface{}:
		return assayDecodeAnyList(value, depth)
	}
	tag, body := assayTagged(data)
	items, _ := body.([]interface{})
	switch tag {
	case "$int":
		number, _ := assayBigInteger(data)
		if number.IsInt64() {
			return number.Int64(), nil
		}
		return number, nil
	case "$float", "$float32":
		value, _ := assayFloatOf(data)
		return value, nil
	case "$tuple":
		return assayDecodeAnyList(items, depth)
	case "$bytes":
		return base64.StdEncoding.DecodeString(fmt.Sprint(body))
	case "$set", "$frozenset":
		set := map[interface{}]bool{}
		for _, item := range items {
			key, err := assayDecodeAny(item, depth+1)
			if err != nil {
				return nil, err
			}
			set[key] = true
		}
		return set, nil
	case "$dict":
		return assayDecodeAnyDict(items, depth)
	}
	return nil, fmt.Errorf("unsupported value tag %q in Go", tag)
}

func assayDecodeAnyList(items []interface{}, depth int) (interface{}, error) {
	list := make([]interface{}, len(items))
	for i, item := range items {
		value, err := assayDecodeAny(item, depth+1)
		if err != nil {
			return nil, err
		}
		list[i] = value
	}
	return list, nil
}

func assayDecodeAnyDict(items []interface{}, depth int) (interface{}, error) {
	texts := map[string]interface{}{}
	general := map[interface{}]interface{}{}
	allText := true
	for _, item := range items {
		pair, ok := item.([]interface{})
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("malformed dict entry")
		}
		key, err := assayDecodeAny(pair[0], depth+1)
		if err != nil {
			return nil, err
		}
		value, err := assayDecodeAny(pair[1], depth+1)
		if err != nil {
			return nil, err
		}
		if text, ok := key.(string); ok {
			texts[text] = value
		} else {
			allText = false
		}
		if reflect.TypeOf(key) != nil && !reflect.TypeOf(key).Comparable() {
			return nil, fmt.Errorf("a dict key of type %T cannot be a Go map key", key)
		}
		general[key] = value
	}
	if allText {
		return texts, nil
	}
	return general, nil
}

// assayEncode turns a Go value into encoded data.
func assayEncode(value reflect.Value, depth int) (interface{}, error) {
	if depth > assayMaxDepth {
		return nil, fmt.Errorf("value is nested more than %d levels deep (or contains itself)", assayMaxDepth)
	}
	if !value.IsValid() {
		return nil, nil
	}
	if value.Type() == assayBigIntType {
		if value.IsNil() {
			return nil, nil
		}
		return assayEncodeBig(value.Interface().(*big.Int)), nil
	}
	switch value.Kind() {
	case reflect.Interface, reflect.Ptr:
		if value.IsNil() {
			return nil, nil
		}
		return assayEncode(value.Elem(), depth+1)
	case reflect.Bool:
		return value.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return assayEncodeBig(big.NewInt(value.Int())), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return assayEncodeBig(new(big.Int).SetUint64(value.Uint())), nil
	case reflect.Float32:
		return assayEncodeFloat32(value.Float()), nil
	case reflect.Float64:
		return assayEncodeFloat(value.Float()), nil
	case reflect.Complex64, reflect.Complex128:
		c := value.Complex()
		return map[string]interface{}{"$complex": []interface{}{assayEncodeFloat(real(c)), assayEncodeFloat(imag(c))}}, nil
	case reflect.String:
		return value.String(), nil
	case reflect.Slice, reflect.Array:
		if value.Kind() == reflect.Slice && value.Type().Elem().Kind() == reflect.Uint8 {
			return map[string]interface{}{"$bytes": base64.StdEncoding.EncodeToString(value.Bytes())}, nil
		}
		return assayEncodeItems(value, depth)
	case reflect.Map:
		return assayEncodeMap(value, depth)
	case reflect.Struct:
		return assayEncodeStruct(value, depth)
	}
	return nil, fmt.Errorf("a value of type %s is not plain data", value.Type())
}

func assayEncodeBig(number *big.Int) interface{} {
	if number.IsInt64() && number.Int64() > -assaySafeInt && number.Int64() < assaySafeInt {
		return number.Int64()
	}
	sign := ""
	if number.Sign() < 0 {
		sign = "-"
	}
	return map[string]interface{}{"$int": sign + new(big.Int).Abs(number).Text(16)}
}

// assayEncodeFloat32 tags a float32 as one, so the parent compares it at float32
// precision, and sends the double nearest its shortest decimal: a float32 0.1
// (0.100000001490116...) crosses as 0.1, the value its program meant, not its widening.
func assayEncodeFloat32(value float64) interface{} {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return assayEncodeFloat(value)
	}
	shortest, _ := strconv.ParseFloat(strconv.FormatFloat(value, 'g', -1, 32), 64)
	return map[string]interface{}{"$float32": assayFloat(shortest)}
}

func assayEncodeFloat(value float64) interface{} {
	switch {
	case math.IsNaN(value):
		return map[string]interface{}{"$float": "nan"}
	case math.IsInf(value, 1):
		return map[string]interface{}{"$float": "inf"}
	case math.IsInf(value, -1):
		return map[string]interface{}{"$float": "-inf"}
	}
	return assayFloat(value)
}

func assayEncodeItems(value reflect.Value, depth int) (interface{}, error) {
	items := make([]interface{}, value.Len()) // a nil slice is an empty list
	for i := range items {
		item, err := assayEncode(value.Index(i), depth+1)
		if err != nil {
			return nil, err
		}
		items[i] = item
	}
	return items, nil
}

func assayEncodeMap(value reflect.Value, depth int) (interface{}, error) {
	keys := value.MapKeys()
	// map order is random in Go: sorted keys make the output reproducible
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	elem := value.Type().Elem()
	asSet := elem.Kind() == reflect.Struct && elem.NumField() == 0
	items := make([]interface{}, 0, len(keys))
	for _, key := range keys {
		encodedKey, err := assayEncode(key, depth+1)
		if err != nil {
			return nil, err
		}
		if asSet {
			items = append(items, encodedKey)
			continue
		}
		encodedValue, err := assayEncode(value.MapIndex(key), depth+1)
		if err != nil {
			return nil, err
		}
		items = append(items, []interface{}{encodedKey, encodedValue})
	}
	if asSet {
		return map[string]interface{}{"$set": items}, nil
	}
	return map[string]interface{}{"$dict": items}, nil
}

func assayEncodeStruct(value reflect.Value, depth int) (interface{}, error) {
	items := []interface{}{}
	for i := 0; i < value.NumField(); i++ {
		field := value.Type().Field(i)
		if !field.IsExported() {
			continue // only what the package shows: as encoding/json does
		}
		encoded, err := assayEncode(value.Field(i), depth+1)
		if err != nil {
			return nil, err
		}
		items = append(items, []interface{}{assayFieldName(field), encoded})
	}
	return map[string]interface{}{"$dict": items}, nil
}
