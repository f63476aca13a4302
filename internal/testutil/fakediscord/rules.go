package fakediscord

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds Discord's validation rules, each answered with Discord's
// own status and error code. Sources: discord-api-docs
// (developers/components/reference.mdx, interactions/receiving-and-responding.mdx,
// interactions/application-commands.mdx, resources/channel.mdx,
// resources/message.mdx, reference.mdx).

// formError is one 50035 Invalid Form Body problem at a field path such as
// "components.0.components.1.label".
type formError struct {
	path, code, msg string
}

func (e *formError) Error() string { return e.path + ": " + e.msg }

func invalid(path, code, format string, args ...any) *formError {
	return &formError{path: path, code: code, msg: fmt.Sprintf(format, args...)}
}

// writeFormError answers 400 50035 with the problem nested under errors,
// as Discord does: {"errors":{"components":{"0":{"label":{"_errors":[...]}}}}}.
func writeFormError(w http.ResponseWriter, e *formError) {
	leaf := map[string]any{"_errors": []any{map[string]any{"code": e.code, "message": e.msg}}}
	parts := strings.Split(e.path, ".")
	var errs any = leaf
	for i := len(parts) - 1; i >= 0; i-- {
		errs = map[string]any{parts[i]: errs}
	}
	writeJSON(w, 400, map[string]any{"code": 50035, "message": "Invalid Form Body", "errors": errs})
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// maxLen checks an optional string field; present but too long fails.
func maxLen(m map[string]any, key, path string, max int) *formError {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	s, isStr := v.(string)
	if !isStr {
		return invalid(path+"."+key, "BASE_TYPE_STRING", "Could not interpret %q as string.", fmt.Sprint(v))
	}
	if runes(s) > max {
		return invalid(path+"."+key, "BASE_TYPE_MAX_LENGTH", "Must be %d or fewer in length.", max)
	}
	return nil
}

// between checks a required string field of min..max characters.
func between(m map[string]any, key, path string, min, max int) *formError {
	s, ok := m[key].(string)
	if !ok {
		return invalid(path+"."+key, "BASE_TYPE_REQUIRED", "This field is required")
	}
	if n := runes(s); n < min || n > max {
		return invalid(path+"."+key, "BASE_TYPE_BAD_LENGTH", "Must be between %d and %d in length.", min, max)
	}
	return nil
}

// intIn checks an optional integer field.
func intIn(m map[string]any, key, path string, min, max int) (int, bool, *formError) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, isNum := v.(float64)
	if !isNum || f != float64(int(f)) {
		return 0, false, invalid(path+"."+key, "NUMBER_TYPE_COERCE", "Value %q is not int.", fmt.Sprint(v))
	}
	n := int(f)
	if n < min {
		return n, true, invalid(path+"."+key, "NUMBER_TYPE_MIN", "int value should be greater than or equal to %d.", min)
	}
	if n > max {
		return n, true, invalid(path+"."+key, "NUMBER_TYPE_MAX", "int value should be less than or equal to %d.", max)
	}
	return n, true, nil
}

func num(v any) int { f, _ := v.(float64); return int(f) }

const componentsV2 = 1 << 15

// validateMessage checks a message create/edit/interaction body.
func (o *outgoing) validateMessage() *formError {
	if o.Content != nil && runes(*o.Content) > 2000 {
		return invalid("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	}
	if n := o.nonce(); n != "" && o.nonceIsString() && runes(n) > 25 {
		return invalid("nonce", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
	}
	if len(o.Embeds) > 10 {
		return invalid("embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
	}
	if o.Flags&componentsV2 != 0 {
		return nil // components v2 layouts are not modelled
	}
	return validateComponents(o.Components)
}

func (o *outgoing) nonceIsString() bool { return len(o.Nonce) > 0 && o.Nonce[0] == '"' }

// validateComponents applies the message component rules: ≤5 action rows
// at the top level, 1-5 buttons or one select per row, the button and
// select limits, custom_ids 1-100 and unique.
func validateComponents(rows []map[string]any) *formError {
	if len(rows) > 5 {
		return invalid("components", "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.")
	}
	seen := map[string]bool{}
	for i, row := range rows {
		p := "components." + strconv.Itoa(i)
		if num(row["type"]) != 1 {
			return invalid(p, "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (1,).")
		}
		inner, _ := row["components"].([]any)
		if len(inner) < 1 || len(inner) > 5 {
			return invalid(p+".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
		}
		for j, c := range inner {
			cm, _ := c.(map[string]any)
			cp := p + ".components." + strconv.Itoa(j)
			var err *formError
			switch typ := num(cm["type"]); typ {
			case 2:
				err = validateButton(cm, cp)
			case 3, 5, 6, 7, 8:
				if len(inner) > 1 {
					return invalid(p+".components", "COMPONENT_LAYOUT_WIDTH_EXCEEDED", "The specified component exceeds the maximum width")
				}
				err = validateSelect(cm, cp, typ)
			default:
				return invalid(cp, "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (2, 3, 5, 6, 7, 8).")
			}
			if err != nil {
				return err
			}
			if id, ok := cm["custom_id"].(string); ok {
				if seen[id] {
					return invalid(cp+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated")
				}
				seen[id] = true
			}
		}
	}
	return nil
}

func validateButton(c map[string]any, p string) *formError {
	style, _, err := intIn(c, "style", p, 1, 6)
	if err != nil {
		return err
	}
	if style == 0 {
		return invalid(p+".style", "BASE_TYPE_REQUIRED", "This field is required")
	}
	switch style {
	case 5:
		if s, _ := c["url"].(string); s == "" {
			return invalid(p+".url", "BASE_TYPE_REQUIRED", "This field is required")
		}
		if err := maxLen(c, "url", p, 512); err != nil {
			return err
		}
		if err := linkButtonURL(c["url"].(string), p+".url"); err != nil {
			return err
		}
		if _, ok := c["custom_id"]; ok && c["custom_id"] != "" {
			return invalid(p+".custom_id", "BUTTON_COMPONENT_INVALID_FIELD", "Link buttons cannot have a custom_id")
		}
	case 6:
		if s, _ := c["sku_id"].(string); s == "" {
			return invalid(p+".sku_id", "BASE_TYPE_REQUIRED", "This field is required")
		}
		return nil
	default:
		if err := between(c, "custom_id", p, 1, 100); err != nil {
			return err
		}
		if u, _ := c["url"].(string); u != "" {
			return invalid(p+".url", "BUTTON_COMPONENT_INVALID_FIELD", "Non-link buttons cannot have a url")
		}
	}
	if err := maxLen(c, "label", p, 80); err != nil {
		return err
	}
	label, _ := c["label"].(string)
	emoji, _ := c["emoji"].(map[string]any)
	if label == "" && (emoji == nil || (emoji["name"] == nil || emoji["name"] == "") && (emoji["id"] == nil || emoji["id"] == "")) {
		return invalid(p, "BUTTON_COMPONENT_MISSING_LABEL_OR_EMOJI", "Buttons must have a label or an emoji")
	}
	return nil
}

// linkButtonURL checks a link button's url as Discord does: a well-formed
// absolute URL with a host, of a scheme its clients open.
func linkButtonURL(s, path string) *formError {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || strings.ContainsAny(s, " \t\n") {
		return invalid(path, "URL_TYPE_INVALID_URL", "Not a well formed URL.")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return invalid(path, "URL_TYPE_INVALID_URL", "Not a well formed URL.")
		}
	case "discord":
	default:
		return invalid(path, "URL_TYPE_INVALID_SCHEME", "Scheme %q is not supported. Scheme must be one of ('http', 'https', 'discord').", u.Scheme)
	}
	return nil
}

// validateSelect checks a select menu. An option's description is
// documented only as "max 100 characters", so "" is accepted.
func validateSelect(c map[string]any, p string, typ int) *formError {
	if err := between(c, "custom_id", p, 1, 100); err != nil {
		return err
	}
	if err := maxLen(c, "placeholder", p, 150); err != nil {
		return err
	}
	min, hasMin, err := intIn(c, "min_values", p, 0, 25)
	if err != nil {
		return err
	}
	max, hasMax, err := intIn(c, "max_values", p, 1, 25)
	if err != nil {
		return err
	}
	if !hasMin {
		min = 1
	}
	if !hasMax {
		max = 1
	}
	if min > max {
		return invalid(p+".min_values", "SELECT_COMPONENT_MIN_VALUES_TOO_LARGE", "min_values must be less than or equal to max_values")
	}
	if typ != 3 {
		return nil
	}
	opts, _ := c["options"].([]any)
	if len(opts) < 1 || len(opts) > 25 {
		return invalid(p+".options", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 25 in length.")
	}
	if max > len(opts) {
		return invalid(p+".max_values", "SELECT_COMPONENT_TOO_MANY_MAX_VALUES", "max_values must be less than or equal to the number of options (%d)", len(opts))
	}
	values := map[string]bool{}
	for k, o := range opts {
		om, _ := o.(map[string]any)
		op := p + ".options." + strconv.Itoa(k)
		for _, key := range []string{"label", "value"} {
			if err := between(om, key, op, 1, 100); err != nil {
				return err
			}
		}
		if err := maxLen(om, "description", op, 100); err != nil {
			return err
		}
		v := om["value"].(string)
		if values[v] {
			return invalid(op+".value", "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED", "Select component option values must be unique")
		}
		values[v] = true
	}
	return nil
}

// validateModal checks a MODAL (9) callback's data: custom_id 1-100,
// title 1-45, 1-5 components, each an action row holding one text input
// (deprecated, still accepted) or a label (type 18) holding one.
func validateModal(m map[string]any) *formError {
	if err := between(m, "custom_id", "data", 1, 100); err != nil {
		return err
	}
	if err := between(m, "title", "data", 1, 45); err != nil {
		return err
	}
	comps, _ := m["components"].([]any)
	if len(comps) < 1 || len(comps) > 5 {
		return invalid("data.components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
	}
	seen := map[string]bool{}
	for i, c := range comps {
		cm, _ := c.(map[string]any)
		p := "data.components." + strconv.Itoa(i)
		var input map[string]any
		var ip string
		switch num(cm["type"]) {
		case 1:
			inner, _ := cm["components"].([]any)
			if len(inner) != 1 {
				return invalid(p+".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 1 in length.")
			}
			input, _ = inner[0].(map[string]any)
			ip = p + ".components.0"
			if num(input["type"]) != 4 {
				return invalid(ip, "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (4,).")
			}
			if err := between(input, "label", ip, 1, 45); err != nil {
				return err
			}
		case 18:
			if err := between(cm, "label", p, 1, 45); err != nil {
				return err
			}
			if err := maxLen(cm, "description", p, 100); err != nil {
				return err
			}
			input, _ = cm["component"].(map[string]any)
			ip = p + ".component"
			if input == nil {
				return invalid(ip, "BASE_TYPE_REQUIRED", "This field is required")
			}
			if num(input["type"]) != 4 {
				if err := validateSelect(input, ip, num(input["type"])); err != nil {
					return err
				}
				continue
			}
		default:
			return invalid(p, "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (1, 18).")
		}
		if err := validateTextInput(input, ip); err != nil {
			return err
		}
		id := input["custom_id"].(string)
		if seen[id] {
			return invalid(ip+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated")
		}
		seen[id] = true
	}
	return nil
}

func validateTextInput(c map[string]any, p string) *formError {
	if err := between(c, "custom_id", p, 1, 100); err != nil {
		return err
	}
	style, _, err := intIn(c, "style", p, 1, 2)
	if err != nil {
		return err
	}
	if style == 0 {
		return invalid(p+".style", "BASE_TYPE_REQUIRED", "This field is required")
	}
	min, _, err := intIn(c, "min_length", p, 0, 4000)
	if err != nil {
		return err
	}
	max, hasMax, err := intIn(c, "max_length", p, 1, 4000)
	if err != nil {
		return err
	}
	if !hasMax {
		max = 4000
	}
	if min > max {
		return invalid(p+".min_length", "TEXT_INPUT_MIN_LENGTH_TOO_LARGE", "min_length must be less than or equal to max_length")
	}
	if err := maxLen(c, "placeholder", p, 100); err != nil {
		return err
	}
	if err := maxLen(c, "value", p, 4000); err != nil {
		return err
	}
	if v, _ := c["value"].(string); runes(v) > max {
		return invalid(p+".value", "BASE_TYPE_MAX_LENGTH", "Must be %d or fewer in length.", max)
	}
	return nil
}

// Slash command rules (developers/interactions/application-commands.mdx).
var commandName = regexp.MustCompile(`^[-_\p{L}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)

// validateCommands checks a bulk overwrite: ≤100 commands, each with a
// valid lowercase name, a 1-100 character description (chat input),
// ≤25 options with required ones first, ≤25 choices of names 1-100 and
// string values ≤100, string max_length 1-6000 and min_length 0-6000.
func validateCommands(cmds []map[string]any) *formError {
	if len(cmds) > 100 {
		return invalid("_root", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
	}
	names := map[string]bool{}
	for i, c := range cmds {
		p := strconv.Itoa(i)
		typ := num(c["type"])
		if typ == 0 {
			typ = 1
		}
		name, _ := c["name"].(string)
		if typ == 1 {
			if !commandName.MatchString(name) || name != strings.ToLower(name) {
				return invalid(p+".name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
			}
			if err := between(c, "description", p, 1, 100); err != nil {
				return err
			}
		} else if err := between(c, "name", p, 1, 32); err != nil {
			return err
		}
		if names[fmt.Sprint(typ, name)] {
			return invalid(p+".name", "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
		}
		names[fmt.Sprint(typ, name)] = true
		opts, _ := c["options"].([]any)
		if err := validateOptions(opts, p+".options"); err != nil {
			return err
		}
		if commandSize(c) > 8000 {
			return invalid(p, "APPLICATION_COMMAND_TOO_LARGE", "Command exceeds maximum size (8000)")
		}
	}
	return nil
}

// commandSize is what Discord counts against the 8000-character limit:
// the names, descriptions and choice values of a command and its options.
func commandSize(m map[string]any) int {
	n := 0
	for _, k := range []string{"name", "description", "value"} {
		if s, ok := m[k].(string); ok {
			n += runes(s)
		}
	}
	for _, k := range []string{"options", "choices"} {
		list, _ := m[k].([]any)
		for _, o := range list {
			if om, ok := o.(map[string]any); ok {
				n += commandSize(om)
			}
		}
	}
	return n
}

func validateOptions(opts []any, p string) *formError {
	if len(opts) > 25 {
		return invalid(p, "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
	}
	optional := false
	names := map[string]bool{}
	for i, o := range opts {
		om, _ := o.(map[string]any)
		op := p + "." + strconv.Itoa(i)
		typ, _, err := intIn(om, "type", op, 1, 11)
		if err != nil {
			return err
		}
		if typ == 0 {
			return invalid(op+".type", "BASE_TYPE_REQUIRED", "This field is required")
		}
		name, _ := om["name"].(string)
		if !commandName.MatchString(name) || name != strings.ToLower(name) {
			return invalid(op+".name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
		}
		if names[name] {
			return invalid(op+".name", "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS", "Option names must be unique")
		}
		names[name] = true
		if err := between(om, "description", op, 1, 100); err != nil {
			return err
		}
		if typ == 1 || typ == 2 { // subcommand (group)
			sub, _ := om["options"].([]any)
			if err := validateOptions(sub, op+".options"); err != nil {
				return err
			}
			continue
		}
		if req, _ := om["required"].(bool); req && optional {
			return invalid(op+".required", "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID", "Required options must be placed before non-required options")
		} else if !req {
			optional = true
		}
		if typ == 3 {
			if _, _, err := intIn(om, "min_length", op, 0, 6000); err != nil {
				return err
			}
			if _, _, err := intIn(om, "max_length", op, 1, 6000); err != nil {
				return err
			}
		}
		if err := validateOptionValues(om, typ, op); err != nil { // autocomplete.go
			return err
		}
		choices, _ := om["choices"].([]any)
		if len(choices) > 25 {
			return invalid(op+".choices", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
		}
		for k, ch := range choices {
			cm, _ := ch.(map[string]any)
			cp := op + ".choices." + strconv.Itoa(k)
			if err := between(cm, "name", cp, 1, 100); err != nil {
				return err
			}
			if typ == 3 {
				if err := between(cm, "value", cp, 1, 100); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// validateThreadName checks a thread's name (1-100 characters).
func validateThreadName(name string) *formError {
	if n := runes(name); n < 1 || n > 100 {
		return invalid("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	}
	return nil
}

// validateArchiveDuration checks auto_archive_duration (0 = absent).
func validateArchiveDuration(d int) *formError {
	switch d {
	case 0, 60, 1440, 4320, 10080:
		return nil
	}
	return invalid("auto_archive_duration", "BASE_TYPE_CHOICES", "Value must be one of {60, 1440, 4320, 10080}.")
}

// knownEmoji reports whether a reaction emoji from the URL path could be
// a Discord emoji: the fake has no custom emoji ("name:id"), and a unicode
// emoji has no letters and is not plain ASCII (a keycap like 1️⃣ needs
// U+20E3). ✅, ⏳ and ⚠️ (with or without U+FE0F) pass.
func knownEmoji(e string) bool {
	if e == "" || strings.Contains(e, ":") {
		return false
	}
	ascii := true
	for _, r := range e {
		if unicode.IsLetter(r) {
			return false
		}
		if r >= 0x80 {
			ascii = false
		}
	}
	return !ascii
}
