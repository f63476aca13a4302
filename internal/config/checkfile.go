package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// LoadAll reads a config for `ccbridge config check` and `run`: where Load
// stops at the first value it cannot decode or at unknown keys, LoadAll
// goes on, and returns every problem at once: values of the wrong type or
// form and unknown keys (each with the key probably meant), then what
// Check finds in the rest. Only a file that cannot be read, or TOML that
// cannot be parsed at all, is an error.
func LoadAll(path string) (*Config, []Problem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	c, problems, err := parseAll(string(b))
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.Path = path
	// A key set aside above is absent from c: what Check says about its
	// absence ("owner_ids: empty") would be a second, wrong, error.
	setAside := map[string]bool{}
	for _, p := range problems {
		setAside[p.Key] = true
	}
	for _, p := range c.Check() {
		if !setAside[p.Key] {
			problems = append(problems, p)
		}
	}
	return c, problems, nil
}

// parseAll decodes strictly when it can; otherwise it sets aside each bad
// key, so the rest still decodes, and reports it.
func parseAll(text string) (*Config, []Problem, error) {
	if c, err := Parse(text); err == nil {
		return c, nil, nil
	}
	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err != nil {
		return nil, nil, err // not TOML at all: nothing after it can be read
	}
	problems := sift("", raw, reflect.TypeFor[Config]())
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(raw); err != nil {
		return nil, nil, err
	}
	c, err := Parse(buf.String())
	if err != nil {
		return nil, nil, err
	}
	return c, problems, nil
}

// sift removes from m every key t does not have or whose value does not
// decode into its field, and returns a problem for each; prefix is the
// dotted path of m.
func sift(prefix string, m map[string]any, t reflect.Type) []Problem {
	fields := map[string]reflect.Type{}
	var names []string
	collectFields(t, fields, &names)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Problem
	for _, k := range keys {
		key := prefix + k
		ft, ok := fields[k]
		if !ok {
			msg := "unknown key"
			if s := closest(k, names); s != "" {
				msg += "; did you mean " + s + "?"
			} else if homes := keyHomes()[k]; len(homes) > 0 {
				msg += " here; it belongs in " + strings.Join(homes, ", ")
			}
			out = append(out, Problem{Key: key, Msg: msg})
			delete(m, k)
			continue
		}
		switch v := m[k]; {
		case isTable(ft) && ft.Kind() == reflect.Struct:
			sub, ok := v.(map[string]any)
			if !ok {
				out = append(out, Problem{Key: key, Msg: "must be a table ([" + key + "])"})
				delete(m, k)
				continue
			}
			out = append(out, sift(key+".", sub, ft)...)
		case isTable(ft):
			subs, ok := v.([]map[string]any)
			if !ok {
				out = append(out, Problem{Key: key, Msg: "must be an array of tables ([[" + key + "]])"})
				delete(m, k)
				continue
			}
			seen := map[string]bool{}
			for i, sub := range subs {
				out = append(out, sift(fmt.Sprintf("%s[%s].", key, elemName(sub, i, seen)), sub, ft.Elem())...)
			}
		default:
			if err := decodesAs(v, ft); err != nil {
				out = append(out, Problem{Key: key, Msg: notDecoded(k, v, ft, err)})
				delete(m, k)
			}
		}
	}
	return out
}

// collectFields maps a struct's TOML keys to their types, embedded
// structs' keys included (as the decoder promotes them).
func collectFields(t reflect.Type, fields map[string]reflect.Type, names *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("toml") == "" {
			collectFields(f.Type, fields, names)
			continue
		}
		if name := tomlName(f); name != "" {
			fields[name] = f.Type
			*names = append(*names, name)
		}
	}
}

// elemName names an element of an array of tables as Check does: by its
// name, else (no name, or one an earlier element has) by its index.
func elemName(m map[string]any, i int, seen map[string]bool) string {
	n, _ := m["name"].(string)
	if n != "" && !seen[n] {
		seen[n] = true
		return n
	}
	return fmt.Sprint(i)
}

// notDecoded says what is wrong with a value of the wrong type. An id, or
// a list of strings, given as a number (an id unquoted, so TOML reads an
// integer: Telegram shows its ids as numbers) is the common case and gets
// an example; otherwise the decoder's words.
func notDecoded(k string, v any, t reflect.Type, err error) string {
	if n, ok := v.(int64); ok && t.Kind() == reflect.String && strings.HasSuffix(k, "_id") {
		return fmt.Sprintf("must be a quoted id, e.g. \"%d\"", n)
	}
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.String {
		return err.Error()
	}
	example := "…"
	switch x := v.(type) {
	case int64:
		example = fmt.Sprint(x)
	case string:
		example = x
	case []any:
		if len(x) > 0 {
			example = fmt.Sprint(x[0])
		}
	}
	what := "strings"
	if strings.HasSuffix(k, "_ids") {
		what = "ids"
	}
	return fmt.Sprintf("must be a list of quoted %s, e.g. [%q]", what, example)
}

// keyHomes maps each key of the schema to the tables it belongs in, as
// written in the file ("[claude]", "[[servers]]"), in schema order.
var keyHomes = sync.OnceValue(func() map[string][]string {
	homes := map[string][]string{}
	var walk func(t reflect.Type, path []string, array bool)
	walk = func(t reflect.Type, path []string, array bool) {
		fields := map[string]reflect.Type{}
		var names []string
		collectFields(t, fields, &names)
		for _, n := range names {
			ft := fields[n]
			switch {
			case isTable(ft) && ft.Kind() == reflect.Struct:
				walk(ft, append(slices.Clip(path), n), false)
			case isTable(ft):
				walk(ft.Elem(), append(slices.Clip(path), n), true)
			case len(path) > 0:
				table := "[" + strings.Join(path, ".") + "]"
				if array {
					table = "[" + table + "]"
				}
				if !slices.Contains(homes[n], table) {
					homes[n] = append(homes[n], table)
				}
			}
		}
	}
	walk(reflect.TypeFor[Config](), nil, false)
	return homes
})

// tomlPrefix is what the decoder puts before a message about a value
// (compiled for the first such message).
var tomlPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^toml: (line \d+ \(last key "v"\): )?`) })

// decodesAs reports whether v decodes into a value of type t, by decoding
// it alone into a struct with one field of that type.
func decodesAs(v any, t reflect.Type) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(map[string]any{"v": v}); err != nil {
		return err
	}
	holder := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `toml:"v"`}}))
	_, err := toml.Decode(buf.String(), holder.Interface())
	if err == nil {
		return nil
	}
	msg := tomlPrefix().ReplaceAllString(err.Error(), "")
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.Message != "" {
		msg = pe.Message
	}
	return errors.New(strings.ReplaceAll(msg, `"v"`, "it"))
}

// closest returns the name nearest to k when it is near enough to be a
// misspelling (an edit distance of at most a third of its length, and 3).
func closest(k string, names []string) string {
	best, bestD := "", min(3, max(1, len(k)/3))+1
	for _, n := range names {
		if d := distance(k, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
