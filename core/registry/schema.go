package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Limits on the arguments, beyond the schema. They keep a model's text from costing more to
// check than it is worth, and each is far above what a tool's arguments need.
const (
	// maxDepth is how deeply objects and arrays may nest.
	maxDepth = 256
	// maxNumberLen is the longest number, in characters.
	maxNumberLen = 64
	// maxExponent bounds a number's decimal exponent: checking "integer" or "multipleOf" on
	// 1e1000000 takes the validator tens of milliseconds each.
	maxExponent = 400
	// maxReported is how many schema errors one refusal lists.
	maxReported = 5
)

// printer renders the validator's messages in English.
var printer = message.NewPrinter(language.English)

// compileSchema compiles a tool's argument schema. The schema must be a JSON object whose
// type is "object"; it may not load anything from outside itself (no file or network $ref).
func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("declares no argument schema")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse argument schema: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("argument schema is %s, not a JSON object", jsonKind(doc))
	}
	if !objectType(obj["type"]) {
		return nil, errors.New(`argument schema must have "type": "object", since arguments are a JSON object`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // nothing outside the schema itself
	url := "urn:buddi:tool:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add argument schema: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile argument schema: %w", err)
	}
	return sch, nil
}

// objectType reports whether a schema's "type" is exactly "object" (or ["object"]).
func objectType(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return len(t) == 1 && t[0] == "object"
	}
	return false
}

// argsError is a problem with the arguments, as one sentence for the model.
type argsError struct{ msg string }

// Error returns the sentence.
func (e *argsError) Error() string { return e.msg }

// argsErrorf builds an argsError.
func argsErrorf(format string, args ...any) *argsError {
	return &argsError{msg: fmt.Sprintf(format, args...)}
}

// checkArgs decodes raw as exactly one JSON object and validates it against sch. The value
// it returns holds map[string]any, []any, string, bool, nil and json.Number, as the
// validator reads them.
func checkArgs(sch *jsonschema.Schema, raw json.RawMessage) (map[string]any, *argsError) {
	args, aerr := decodeArgs(raw)
	if aerr != nil {
		return nil, aerr
	}
	if err := sch.Validate(args); err != nil {
		var verr *jsonschema.ValidationError
		if errors.As(err, &verr) {
			return nil, &argsError{msg: describeValidation(verr)}
		}
		return nil, argsErrorf("the arguments could not be checked: %v", err)
	}
	return args, nil
}

// decodeArgs reads raw as exactly one JSON object. It refuses what a tool decoding the same
// bytes might read differently from the validator: a key given twice, a number too large to
// mean anything, anything after the object.
func decodeArgs(raw json.RawMessage) (map[string]any, *argsError) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, argsErrorf("the arguments are empty; send a JSON object ({} when there are none)")
	}
	d := &argDecoder{dec: json.NewDecoder(bytes.NewReader(raw))}
	d.dec.UseNumber()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if tok != json.Delim('{') {
		return nil, argsErrorf("the arguments must be a JSON object, not %s", tokenKind(tok))
	}
	v, aerr := d.value(tok, "", 0)
	if aerr != nil {
		return nil, aerr
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, argsErrorf("the arguments must be one JSON object with nothing after it")
	}
	return v.(map[string]any), nil
}

// argDecoder builds a JSON value token by token.
type argDecoder struct{ dec *json.Decoder }

// value builds the value that starts with tok, found at the JSON pointer ptr.
func (d *argDecoder) value(tok json.Token, ptr string, depth int) (any, *argsError) {
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, argsErrorf("%s: nests deeper than %d levels", showPointer(ptr), maxDepth)
		}
		switch t {
		case '{':
			return d.object(ptr, depth)
		case '[':
			return d.array(ptr, depth)
		}
		return nil, argsErrorf("the arguments are not valid JSON: unexpected %q", string(t))
	case json.Number:
		if aerr := checkNumber(t, ptr); aerr != nil {
			return nil, aerr
		}
		return t, nil
	case string, bool, nil:
		return t, nil
	}
	return nil, argsErrorf("the arguments are not valid JSON: unexpected %v", tok)
}

// object reads the members of an object whose '{' has been read.
func (d *argDecoder) object(ptr string, depth int) (any, *argsError) {
	m := map[string]any{}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, argsErrorf("the arguments are not valid JSON: an object key must be a string")
		}
		at := ptr + "/" + escapePointer(key)
		if _, dup := m[key]; dup {
			return nil, argsErrorf("%s: the key is given more than once", showPointer(at))
		}
		tok, err = d.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		v, aerr := d.value(tok, at, depth+1)
		if aerr != nil {
			return nil, aerr
		}
		m[key] = v
	}
	if _, err := d.dec.Token(); err != nil { // '}'
		return nil, syntaxError(err)
	}
	return m, nil
}

// array reads the elements of an array whose '[' has been read.
func (d *argDecoder) array(ptr string, depth int) (any, *argsError) {
	a := []any{}
	for i := 0; d.dec.More(); i++ {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		v, aerr := d.value(tok, ptr+"/"+strconv.Itoa(i), depth+1)
		if aerr != nil {
			return nil, aerr
		}
		a = append(a, v)
	}
	if _, err := d.dec.Token(); err != nil { // ']'
		return nil, syntaxError(err)
	}
	return a, nil
}

// checkNumber refuses a number too long, or with an exponent too large, to be an argument.
func checkNumber(n json.Number, ptr string) *argsError {
	s := string(n)
	if len(s) > maxNumberLen {
		return argsErrorf("%s: the number is longer than %d characters", showPointer(ptr), maxNumberLen)
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return argsErrorf("%s: the number's exponent is out of range", showPointer(ptr))
		}
	}
	return nil
}

// syntaxError turns a decoder error into a sentence for the model.
func syntaxError(err error) *argsError {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return argsErrorf("the arguments are not valid JSON: they end too early")
	}
	return argsErrorf("the arguments are not valid JSON: %v", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON type of a decoded value, with its article.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// tokenKind names the JSON type of the value a token starts, with its article.
func tokenKind(tok json.Token) string {
	switch tok {
	case json.Delim('['):
		return "an array"
	case json.Delim('{'):
		return "an object"
	}
	return jsonKind(tok)
}

// describeValidation renders a validation failure as one sentence naming each field that is
// wrong and what is wrong with it: "/path: is required; /lines: got string, want integer".
func describeValidation(verr *jsonschema.ValidationError) string {
	var problems []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		problems = append(problems, leafProblems(e)...)
	}
	walk(verr)
	slices.Sort(problems)
	problems = slices.Compact(problems)
	if len(problems) == 0 {
		return "the arguments do not match the tool's schema"
	}
	more := ""
	if len(problems) > maxReported {
		more = fmt.Sprintf("; and %d more", len(problems)-maxReported)
		problems = problems[:maxReported]
	}
	return "the arguments do not match the tool's schema: " + strings.Join(problems, "; ") + more
}

// leafProblems renders one leaf of a validation failure, one line per field it names.
func leafProblems(e *jsonschema.ValidationError) []string {
	ptr := ""
	for _, tok := range e.InstanceLocation {
		ptr += "/" + escapePointer(tok)
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]string, 0, len(k.Missing))
		for _, m := range k.Missing {
			out = append(out, showPointer(ptr+"/"+escapePointer(m))+": is required")
		}
		return out
	case *kind.AdditionalProperties:
		out := make([]string, 0, len(k.Properties))
		for _, p := range k.Properties {
			out = append(out, showPointer(ptr+"/"+escapePointer(p))+": is not allowed")
		}
		return out
	case *kind.FalseSchema:
		return []string{showPointer(ptr) + ": is not allowed"}
	}
	return []string{showPointer(ptr) + ": " + e.ErrorKind.LocalizedString(printer)}
}

// escapePointer escapes one JSON pointer token (RFC 6901).
func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// showPointer renders a JSON pointer for a sentence: the root is "the arguments", a plain
// pointer is shown as it is, anything with unprintable characters is quoted.
func showPointer(ptr string) string {
	if ptr == "" {
		return "the arguments"
	}
	for _, r := range ptr {
		if !strconv.IsPrint(r) {
			return strconv.Quote(ptr)
		}
	}
	return ptr
}
