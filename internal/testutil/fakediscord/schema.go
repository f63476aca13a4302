package fakediscord

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Discord's own published OpenAPI description (discord/discord-api-spec,
// specs/openapi.json, commit 74fda0f): every REST body the fake receives is
// validated against it, so a field Discord would refuse fails the test here
// too. The hand-written rules (rules.go) stay on top: the schema allows 4,000
// characters of content and says nothing of five action rows.
//
//go:embed testdata/discord-openapi.json
var openAPISpec []byte

const specURL = "https://discord.com/openapi.json"

// spec is the parsed description and a cache of compiled request schemas,
// shared by every fake in the process: parsing 1.2 MB once is enough.
var spec = sync.OnceValues(loadSpec)

type openAPI struct {
	schemas  map[string]any // components/schemas, by name
	compiler *jsonschema.Compiler
	ops      []operation

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// operation is one method on one path template, split in segments
// ("{channel_id}" matches any one segment).
type operation struct {
	method  string
	segs    []string
	pointer string // JSON pointer of the application/json request schema
}

func loadSpec() (*openAPI, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPISpec))
	if err != nil {
		return nil, fmt.Errorf("parse the OpenAPI description: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(specURL, doc); err != nil {
		return nil, fmt.Errorf("load the OpenAPI description: %w", err)
	}
	components, _ := doc.(map[string]any)["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	o := &openAPI{schemas: schemas, compiler: c, compiled: map[string]*jsonschema.Schema{}}
	paths, _ := doc.(map[string]any)["paths"].(map[string]any)
	for path, item := range paths {
		methods, _ := item.(map[string]any)
		for method, v := range methods {
			op, _ := v.(map[string]any)
			body, _ := op["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			if _, ok := content["application/json"]; !ok {
				continue
			}
			o.ops = append(o.ops, operation{
				method:  strings.ToUpper(method),
				segs:    strings.Split(strings.Trim(path, "/"), "/"),
				pointer: "/paths/" + escapePointer(path) + "/" + method + "/requestBody/content/application~1json/schema",
			})
		}
	}
	// A literal segment beats a template one ("@original" over "{message_id}").
	slices.SortFunc(o.ops, func(a, b operation) int { return literals(b.segs) - literals(a.segs) })
	return o, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func literals(segs []string) int {
	n := 0
	for _, s := range segs {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

// schemaFor returns the request schema of method on path (below /api/vN),
// or nil when Discord documents no JSON body for it.
func (o *openAPI) schemaFor(method string, seg []string) (*jsonschema.Schema, error) {
	for _, op := range o.ops {
		if op.method != method || len(op.segs) != len(seg) {
			continue
		}
		match := true
		for i, s := range op.segs {
			if !strings.HasPrefix(s, "{") && s != seg[i] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if sch, ok := o.compiled[op.pointer]; ok {
			return sch, nil
		}
		sch, err := o.compiler.Compile(specURL + "#" + op.pointer)
		if err != nil {
			return nil, fmt.Errorf("compile %s %s: %w", method, strings.Join(op.segs, "/"), err)
		}
		o.compiled[op.pointer] = sch
		return sch, nil
	}
	return nil, nil
}

// checkSchema validates a request's JSON body (or the payload_json part of
// a multipart body) against Discord's schema for its route. It leaves the
// body readable for the handler. A body the schema refuses is returned as
// the 50035 problem Discord would answer with.
func checkSchema(r *http.Request, seg []string) (*formError, error) {
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodDelete {
		return nil, nil
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		// The handler meets the same broken body and answers it.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(raw), errReader{err}))
		return nil, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	o, err := spec()
	if err != nil {
		return nil, err
	}
	sch, err := o.schemaFor(r.Method, seg)
	if err != nil || sch == nil {
		return nil, err
	}
	probe := r.Clone(r.Context())
	probe.Body = io.NopCloser(bytes.NewReader(raw))
	body, _, err := readPayload(probe)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return nil, nil // the handler answers unreadable bodies itself (50109)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return nil, nil
	}
	permissionsAsIntegers(inst, "")
	verr := sch.Validate(inst)
	if verr == nil {
		return nil, nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return nil, verr
	}
	return o.problem(ve), nil
}

// permissionFields are the bitfields Discord's schema types as integers while
// its docs, and discordgo, send them as decimal strings; Discord takes both.
var permissionFields = []string{"permissions", "default_member_permissions", "allow", "deny"}

func permissionsAsIntegers(v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if s, ok := child.(string); ok && slices.Contains(permissionFields, k) {
				if _, err := strconv.ParseUint(s, 10, 64); err == nil {
					x[k] = json.Number(s)
				}
				continue
			}
			permissionsAsIntegers(child, k)
		}
	case []any:
		for _, child := range x {
			permissionsAsIntegers(child, key)
		}
	}
}

// schemaProblem turns the validator's error tree into the one field Discord
// would name, with Discord's error code for it. Unions without a
// discriminator (components, thread kinds) fail in every branch; the branch to
// report is the one whose "type" matched.
func (o *openAPI) problem(ve *jsonschema.ValidationError) *formError {
	loc, code, msg := o.pick(ve)
	path := strings.Join(loc, ".")
	if path == "" {
		path = "_root"
	}
	return invalid(path, code, "%s", msg)
}

func (o *openAPI) pick(ve *jsonschema.ValidationError) (loc []string, code, msg string) {
	switch k := ve.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		kept := o.typeMatched(ve.Causes, len(ve.InstanceLocation))
		if len(kept) == 0 {
			if len(ve.InstanceLocation) == 0 && anyFailsOnType(ve.Causes) {
				return []string{"type"}, "BASE_TYPE_CHOICES", "Value is not a valid choice."
			}
			return ve.InstanceLocation, "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of the allowed types."
		}
		return o.deepestOf(kept)
	case *kind.Required:
		return append(slices.Clone(ve.InstanceLocation), k.Missing[0]), "BASE_TYPE_REQUIRED", "This field is required"
	}
	if len(ve.Causes) > 0 {
		return o.deepestOf(ve.Causes)
	}
	if l := ve.InstanceLocation; isTypeChoice(ve.ErrorKind) && len(l) >= 3 && l[len(l)-1] == "type" && isIndex(l[len(l)-2]) && l[len(l)-3] == "components" {
		// A component of a kind not allowed here: Discord names the component.
		return l[:len(l)-1], "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of the allowed types."
	}
	return ve.InstanceLocation, discordCode(ve.ErrorKind), ve.Error()
}

func (o *openAPI) deepestOf(causes []*jsonschema.ValidationError) (loc []string, code, msg string) {
	for i, c := range causes {
		l, cd, m := o.pick(c)
		if i == 0 || len(l) > len(loc) {
			loc, code, msg = l, cd, m
		}
	}
	return loc, code, msg
}

func isTypeChoice(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Enum, *kind.Const:
		return true
	}
	return false
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// discordCode names a schema failure the way Discord's 50035 answers do.
func discordCode(k jsonschema.ErrorKind) string {
	switch k.(type) {
	case *kind.MaxLength, *kind.MaxItems:
		return "BASE_TYPE_MAX_LENGTH"
	case *kind.MinLength, *kind.MinItems:
		return "BASE_TYPE_MIN_LENGTH"
	case *kind.Maximum, *kind.ExclusiveMaximum:
		return "NUMBER_TYPE_MAX"
	case *kind.Minimum, *kind.ExclusiveMinimum:
		return "NUMBER_TYPE_MIN"
	case *kind.Enum, *kind.Const:
		return "BASE_TYPE_CHOICES"
	case *kind.Type:
		return "BASE_TYPE_BAD_TYPE"
	}
	return "SCHEMA_INVALID"
}

// typeMatched keeps the union branches the object is one of: those whose
// own "type" field matched (Discord's implicit discriminator), else those
// that did not fail on it and lack no field (a branch that lacks fields is
// another kind of object). When the object named a type that fits no branch
// and what is left lacks fields, none is kept: the type itself is wrong.
func (o *openAPI) typeMatched(branches []*jsonschema.ValidationError, depth int) []*jsonschema.ValidationError {
	var typed, matched []*jsonschema.ValidationError
	for _, b := range branches {
		if failsOnType(b, depth) {
			continue
		}
		typed = append(typed, b)
		if o.discriminates(b) {
			matched = append(matched, b)
		}
	}
	if len(matched) > 0 {
		return matched
	}
	var whole []*jsonschema.ValidationError
	for _, b := range typed {
		if !missesFields(b, depth) {
			whole = append(whole, b)
		}
	}
	switch {
	case len(whole) > 0:
		return whole
	case len(typed) < len(branches):
		return nil
	}
	return typed
}

// discriminates says a branch is a $ref to a schema whose "type" property is
// pinned to values.
func (o *openAPI) discriminates(branch *jsonschema.ValidationError) bool {
	ref, ok := branch.ErrorKind.(*kind.Reference)
	if !ok {
		return false
	}
	_, name, _ := strings.Cut(ref.URL, "#/components/schemas/")
	sch, _ := o.schemas[name].(map[string]any)
	props, _ := sch["properties"].(map[string]any)
	typ, _ := props["type"].(map[string]any)
	_, enum := typ["enum"]
	_, konst := typ["const"]
	return enum || konst
}

func failsOnType(ve *jsonschema.ValidationError, depth int) bool {
	switch ve.ErrorKind.(type) {
	case *kind.Type:
		if len(ve.InstanceLocation) == depth {
			return true
		}
	case *kind.Enum, *kind.Const:
		loc := ve.InstanceLocation
		if len(loc) == depth+1 && loc[depth] == "type" {
			return true
		}
	}
	for _, c := range ve.Causes {
		if failsOnType(c, depth) {
			return true
		}
	}
	return false
}

func anyFailsOnType(branches []*jsonschema.ValidationError) bool {
	for _, b := range branches {
		if failsOnType(b, 0) {
			return true
		}
	}
	return false
}

// missesFields says a branch failed for a required field at depth.
func missesFields(ve *jsonschema.ValidationError, depth int) bool {
	if _, req := ve.ErrorKind.(*kind.Required); req && len(ve.InstanceLocation) == depth {
		return true
	}
	for _, c := range ve.Causes {
		if missesFields(c, depth) {
			return true
		}
	}
	return false
}

// schemaRefusal is the 50035 problem of a body Discord's schema refuses, or
// nil. Unless the test expects such bodies, the refusal also fails it: real
// Discord would refuse the request, so the code that sent it is wrong.
func (s *Server) schemaRefusal(r *http.Request, seg []string) *formError {
	bad, err := checkSchema(r, seg)
	if err != nil {
		s.t.Errorf("fakediscord: schema check of %s /%s: %v", r.Method, strings.Join(seg, "/"), err)
		return nil
	}
	if bad != nil && !s.InvalidBodiesExpected.Load() {
		s.t.Errorf("fakediscord: Discord would refuse %s /%s (400 50035): %s", r.Method, strings.Join(seg, "/"), bad)
	}
	return bad
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
