package config

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Writing a config is the exception to "ccbridge never writes the user's
// file": `ccbridge setup` does, when asked. It reads the file with Decode
// (strict, so every key it holds is in the struct: nothing is dropped) and
// writes it back with Encode, which keeps every key and value that was set
// (and only those: defaults stay implicit). Comments are not kept; setup
// keeps a backup of the previous file.

// SetupHeader is the first line of the header setup writes; a config
// that starts with it was written by setup.
const SetupHeader = "ccbridge configuration, written by `ccbridge setup`."

// WrittenBySetup reports whether the config text starts with SetupHeader.
func WrittenBySetup(text []byte) bool { return bytes.HasPrefix(text, []byte("# "+SetupHeader+"\n")) }

// Decode parses TOML text strictly, like Parse, but applies no defaults,
// so that Encode writes back only what the file said.
func Decode(text string) (*Config, error) {
	var c Config
	md, err := toml.Decode(text, &c)
	if err != nil {
		return nil, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("unknown keys: %s", strings.Join(keys, ", "))
	}
	return &c, nil
}

// Encode renders a config as TOML: fields in schema order, keys whose value
// is the zero value left out, tables and arrays of tables indented by depth.
func Encode(c *Config, header string) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		if line != "" {
			b.WriteString("# " + line + "\n")
		}
	}
	encodeTable(&b, reflect.ValueOf(*c), nil, false)
	return bytes.TrimLeft(b.Bytes(), "\n")
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

// isTable reports whether a field is written as a [table] or [[array]].
func isTable(t reflect.Type) bool {
	if t.Implements(textMarshaler) {
		return false
	}
	return t.Kind() == reflect.Struct || (t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && !t.Elem().Implements(textMarshaler))
}

func encodeTable(b *bytes.Buffer, v reflect.Value, path []string, array bool) {
	indent := strings.Repeat("  ", max(len(path)-1, 0))
	if len(path) > 0 {
		open, end := "[", "]"
		if array {
			open, end = "[[", "]]"
		}
		fmt.Fprintf(b, "\n%s%s%s%s\n", indent, open, strings.Join(path, "."), end)
	}
	fields := tomlFields(v)
	// Plain keys first: TOML puts every key after a table header into it.
	for _, fd := range fields {
		f, fv := fd.f, fd.v
		if isTable(f.Type) || fv.IsZero() {
			continue
		}
		fmt.Fprintf(b, "%s%s = %s\n", indent, key(fd.name), value(fv))
	}
	for _, fd := range fields {
		f, fv, name := fd.f, fd.v, fd.name
		if !isTable(f.Type) || fv.IsZero() {
			continue
		}
		sub := append(slices.Clip(path), name)
		if f.Type.Kind() == reflect.Struct {
			encodeTable(b, fv, sub, false)
			continue
		}
		for j := range fv.Len() {
			encodeTable(b, fv.Index(j), sub, true)
		}
	}
}

type field struct {
	f    reflect.StructField
	v    reflect.Value
	name string
}

// tomlFields lists a struct's TOML keys in schema order; an embedded struct
// without a tag is flattened into its parent, as the decoder reads it.
func tomlFields(v reflect.Value) []field {
	var out []field
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("toml") == "" {
			out = append(out, tomlFields(v.Field(i))...)
			continue
		}
		if name := tomlName(f); name != "" {
			out = append(out, field{f, v.Field(i), name})
		}
	}
	return out
}

func tomlName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	return tag
}

func key(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return quote(k)
		}
	}
	return k
}

func value(v reflect.Value) string {
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		text, _ := m.MarshalText()
		return quote(string(text))
	}
	switch v.Kind() {
	case reflect.Pointer:
		return value(v.Elem()) // a nil one is zero and never written
	case reflect.String:
		return quote(v.String())
	case reflect.Bool:
		return fmt.Sprint(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprint(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprint(v.Uint())
	case reflect.Float32, reflect.Float64:
		f := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(f, ".eIN") {
			f += ".0" // a TOML float, not an integer
		}
		return f
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = value(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		keys := v.MapKeys()
		if len(keys) == 0 {
			return "{}"
		}
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = key(k.String()) + " = " + value(v.MapIndex(k))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	panic(fmt.Sprintf("config.Encode: unsupported kind %s", v.Kind()))
}

// quote writes a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
