package faketelegram

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// A machine-readable description of the Bot API 10.1, generated from
// core.telegram.org/bots/api by PaulSonOfLars/telegram-bot-api-spec
// (api.json, commit 160fd99, MIT licence).
//
//go:embed testdata/telegram-bot-api.json
var apiSpec []byte

// spec is the parsed description, shared by every fake in the process.
var spec = sync.OnceValues(loadSpec)

type field struct {
	Name     string   `json:"name"`
	Types    []string `json:"types"`
	Required bool     `json:"required"`
	Desc     string   `json:"description"`
}

type specEntry struct {
	Name     string   `json:"name"`
	Fields   []field  `json:"fields"`
	Subtypes []string `json:"subtypes"`
	Desc     []string `json:"description"`
	Returns  []string `json:"returns"`
}

type botAPI struct {
	Version string                `json:"version"`
	Methods map[string]*specEntry `json:"methods"`
	Types   map[string]*specEntry `json:"types"`

	byLower map[string]*specEntry // methods by lower-case name: Telegram's are case-insensitive
	// disc maps an abstract type (ReactionType) to its subtypes by the
	// value of their discriminating field (type "emoji" → ReactionTypeEmoji).
	disc map[string]discriminator
	// reactions is the only emoji a bot may react with, from
	// ReactionTypeEmoji.emoji's description.
	reactions map[string]bool
}

type discriminator struct {
	field string
	to    map[string]string
}

// discValue finds the constant a subtype's field holds: `always "emoji"`,
// `must be chat`.
var discValue = regexp.MustCompile(`(?:always|must be) "?([a-z_]+)"?`)

var quoted = regexp.MustCompile(`"([^"]+)"`)

func loadSpec() (*botAPI, error) {
	var a botAPI
	if err := json.Unmarshal(apiSpec, &a); err != nil {
		return nil, fmt.Errorf("parse the Bot API description: %w", err)
	}
	a.byLower = make(map[string]*specEntry, len(a.Methods))
	for name, m := range a.Methods {
		a.byLower[strings.ToLower(name)] = m
	}
	a.disc = map[string]discriminator{}
	for name, t := range a.Types {
		if len(t.Subtypes) == 0 {
			continue
		}
		d := discriminator{to: map[string]string{}}
		for _, sub := range t.Subtypes {
			st := a.Types[sub]
			if st == nil || len(st.Fields) == 0 {
				continue
			}
			// The discriminator is the subtype's first field (type, status, source).
			f := st.Fields[0]
			if m := discValue.FindStringSubmatch(f.Desc); m != nil {
				d.field = f.Name
				d.to[m[1]] = sub
			}
		}
		if d.field != "" {
			a.disc[name] = d
		}
	}
	emoji := a.Types["ReactionTypeEmoji"]
	if emoji == nil {
		return nil, fmt.Errorf("the description has no ReactionTypeEmoji")
	}
	a.reactions = map[string]bool{}
	for _, f := range emoji.Fields {
		if f.Name != "emoji" {
			continue
		}
		for _, m := range quoted.FindAllStringSubmatch(f.Desc, -1) {
			a.reactions[m[1]] = true
		}
	}
	if len(a.reactions) < 10 {
		return nil, fmt.Errorf("read only %d allowed reactions from ReactionTypeEmoji", len(a.reactions))
	}
	return &a, nil
}

// params are a call's parameters the way the Bot API server sees them: every
// top-level value as a string (a JSON body's non-string values as their JSON
// text), uploaded files apart.
type params struct {
	values map[string]string
	files  map[string]*upload
}

type upload struct {
	name string
	data []byte
}

// has reports whether a parameter was given: the Bot API server reads an
// empty value as a missing one.
func (p params) has(name string) bool {
	if v := p.values[name]; v != "" {
		return true
	}
	_, ok := p.files[name]
	return ok
}

// checkCall validates a call's parameters against the method's fields:
// required ones present, each value of one of its types, objects checked
// field by field. It returns Telegram's description for the first fault,
// and separately the parameters and object fields the description does not
// know (Telegram ignores those; they are almost always a caller's typo).
func (a *botAPI) checkCall(m *specEntry, p params) (bad string, unknown []string) {
	known := map[string]bool{}
	for _, f := range m.Fields {
		known[f.Name] = true
		if !p.has(f.Name) {
			if f.Required {
				return emptyParam(f.Name), nil
			}
			continue
		}
		if up, ok := p.files[f.Name]; ok {
			if !slices.Contains(f.Types, "InputFile") {
				return fmt.Sprintf("Bad Request: parameter %q can't be a file", f.Name), nil
			}
			if len(up.data) == 0 {
				return "Bad Request: file must be non-empty", nil
			}
			continue
		}
		if msg := a.checkParam(f, p, &unknown); msg != "" {
			return msg, nil
		}
	}
	for name, v := range p.values {
		if !known[name] && v != "" {
			unknown = append(unknown, name)
		}
	}
	for name := range p.files {
		if !known[name] && !attached(p, name) {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	return "", unknown
}

// attached reports whether a file part is referenced as attach://name.
func attached(p params, name string) bool {
	for _, v := range p.values {
		if strings.Contains(v, "attach://"+name) {
			return true
		}
	}
	return false
}

func emptyParam(name string) string {
	if name == "text" {
		return "Bad Request: message text is empty"
	}
	return "Bad Request: " + name + " is empty"
}

// checkParam checks one top-level string value against the field's types.
func (a *botAPI) checkParam(f field, p params, unknown *[]string) string {
	v := p.values[f.Name]
	types := f.Types
	if val, err := decodeJSON([]byte(v)); err == nil {
		if obj, ok := val.(map[string]any); ok {
			if typ := a.objectUnion(obj, f.Types); typ != "" {
				types = []string{typ}
			}
		}
	}
	var errs []string
	for _, typ := range types {
		switch typ {
		case "String":
			return ""
		case "Integer":
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				return ""
			}
		case "Float":
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				return ""
			}
		case "Boolean":
			if _, ok := parseBool(v); ok {
				return ""
			}
		case "InputFile":
			if name, ok := strings.CutPrefix(v, "attach://"); ok && p.files[name] != nil {
				return ""
			}
		default:
			val, err := decodeJSON([]byte(v))
			if err != nil {
				errs = append(errs, "not a JSON value")
				continue
			}
			var unk []string
			if msg := a.checkValue(val, typ, f.Name, &unk); msg != "" {
				errs = append(errs, msg)
				continue
			}
			*unknown = append(*unknown, unk...)
			return ""
		}
	}
	if len(errs) > 0 {
		return fmt.Sprintf("Bad Request: can't parse %s: %s", f.Name, errs[0])
	}
	return fmt.Sprintf("Bad Request: wrong parameter %s: expected %s", f.Name, strings.Join(f.Types, " or "))
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// checkValue checks a decoded JSON value against one type of the
// description; path names the value in the message.
func (a *botAPI) checkValue(v any, typ, path string, unknown *[]string) string {
	if elem, ok := strings.CutPrefix(typ, "Array of "); ok {
		arr, ok := v.([]any)
		if !ok {
			return path + " must be an Array"
		}
		for i, e := range arr {
			if msg := a.checkValue(e, elem, fmt.Sprintf("%s[%d]", path, i), unknown); msg != "" {
				return msg
			}
		}
		return ""
	}
	switch typ {
	case "String":
		if _, ok := v.(string); !ok {
			return path + " must be a String"
		}
		return ""
	case "Integer":
		// Telegram's JSON reader takes an integer written as a string too.
		switch n := v.(type) {
		case json.Number:
			if _, err := n.Int64(); err == nil {
				return ""
			}
		case string:
			if _, err := strconv.ParseInt(n, 10, 64); err == nil {
				return ""
			}
		}
		return path + " must be an Integer"
	case "Float":
		switch n := v.(type) {
		case json.Number:
			return ""
		case string:
			if _, err := strconv.ParseFloat(n, 64); err == nil {
				return ""
			}
		}
		return path + " must be a Float"
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return path + " must be a Boolean"
		}
		return ""
	}
	t := a.Types[typ]
	if t == nil {
		return "" // a type the description names but does not define
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return path + " must be an Object of type " + typ
	}
	if len(t.Subtypes) > 0 {
		d, ok := a.disc[typ]
		if !ok {
			return ""
		}
		kind, _ := obj[d.field].(string)
		sub, ok := d.to[kind]
		if !ok {
			return fmt.Sprintf("%s: unsupported %s %s %q", path, typ, d.field, kind)
		}
		return a.checkObject(obj, a.Types[sub], path, unknown)
	}
	return a.checkObject(obj, t, path, unknown)
}

func (a *botAPI) checkObject(obj map[string]any, t *specEntry, path string, unknown *[]string) string {
	if len(t.Fields) == 0 {
		return ""
	}
	known := map[string]bool{}
	for _, f := range t.Fields {
		known[f.Name] = true
		v, ok := obj[f.Name]
		if !ok || v == nil {
			if f.Required {
				return fmt.Sprintf("%s: field %q of %s is required", path, f.Name, t.Name)
			}
			continue
		}
		var first string
		for _, typ := range f.Types {
			msg := a.checkValue(v, typ, path+"."+f.Name, unknown)
			if msg == "" {
				first = ""
				break
			}
			if first == "" {
				first = msg
			}
		}
		if first != "" {
			return first
		}
	}
	for name := range obj {
		if !known[name] {
			*unknown = append(*unknown, path+"."+name)
		}
	}
	return ""
}

// checkResult checks a method's result against what the description says it
// returns, so the fake cannot drift from the objects Telegram sends.
func (a *botAPI) checkResult(m *specEntry, result any) string {
	b, err := json.Marshal(result)
	if err != nil {
		return err.Error()
	}
	v, err := decodeJSON(b)
	if err != nil {
		return err.Error()
	}
	var first string
	for _, typ := range m.Returns {
		var unknown []string
		msg := a.checkValue(v, typ, "result", &unknown)
		if msg == "" && len(unknown) > 0 {
			msg = "fields " + strings.Join(unknown, ", ") + " are not in " + typ
		}
		if msg == "" {
			return ""
		}
		if first == "" {
			first = msg
		}
	}
	return first
}

// objectUnion picks, among object types, the one whose required fields the
// object has (reply_markup: InlineKeyboardMarkup or ForceReply or ...).
func (a *botAPI) objectUnion(obj map[string]any, types []string) string {
	for _, typ := range types {
		t := a.Types[typ]
		if t == nil || len(t.Fields) == 0 {
			continue
		}
		all := true
		for _, f := range t.Fields {
			if _, ok := obj[f.Name]; f.Required && !ok {
				all = false
				break
			}
		}
		if all {
			return typ
		}
	}
	return ""
}
