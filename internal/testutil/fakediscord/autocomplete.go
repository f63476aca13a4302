package fakediscord

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Autocomplete and option-value rules (developers/interactions/
// application-commands.mdx, receiving-and-responding.mdx):
//   - autocomplete may be set only on STRING (3), INTEGER (4) and NUMBER
//     (10) options, and never together with choices;
//   - min_value and max_value belong to INTEGER and NUMBER options (an
//     INTEGER's are whole numbers), min_value at most max_value;
//   - an APPLICATION_COMMAND_AUTOCOMPLETE interaction (type 4) is answered
//     only with APPLICATION_COMMAND_AUTOCOMPLETE_RESULT (8), and type 8
//     answers nothing else; its data holds at most 25 choices, each with a
//     1-100 character name and (for a string) a value of at most 100;
//   - like every interaction it must be answered within 3 s (10062 after).
// Errors are 50035 Invalid Form Body with the field's error, as Discord
// words it where known.

// validateOptionValues applies the autocomplete and min/max rules to one
// option of a command being registered.
func validateOptionValues(om map[string]any, typ int, op string) *formError {
	if auto, _ := om["autocomplete"].(bool); auto {
		if typ != 3 && typ != 4 && typ != 10 {
			return invalid(op+".autocomplete", "APPLICATION_COMMAND_AUTOCOMPLETE_INVALID", "Autocomplete cannot be configured for this type of option")
		}
		if choices, _ := om["choices"].([]any); len(choices) > 0 {
			return invalid(op+".autocomplete", "APPLICATION_COMMAND_AUTOCOMPLETE_CHOICES", "Autocomplete cannot be set with choices")
		}
	}
	var bounds [2]*float64
	for i, k := range []string{"min_value", "max_value"} {
		v, ok := om[k]
		if !ok || v == nil {
			continue
		}
		if typ != 4 && typ != 10 {
			return invalid(op+"."+k, "APPLICATION_COMMAND_OPTION_INVALID", "%s can only be set on integer and number options", k)
		}
		f, isNum := v.(float64)
		if !isNum || (typ == 4 && f != float64(int64(f))) {
			return invalid(op+"."+k, "NUMBER_TYPE_COERCE", "Value %q is not int.", fmt.Sprint(v))
		}
		bounds[i] = &f
	}
	if bounds[0] != nil && bounds[1] != nil && *bounds[0] > *bounds[1] {
		return invalid(op+".min_value", "NUMBER_TYPE_MAX", "min_value must be less than or equal to max_value")
	}
	return nil
}

// autocompleteAllowed applies the callback rules of autocomplete.
func autocompleteAllowed(it *Interaction, typ int, data json.RawMessage) *formError {
	switch {
	case it.Type == 4 && typ != 8:
		return invalid("type", "INTERACTION_RESPONSE_TYPE_INVALID", "An autocomplete interaction is answered only with type 8")
	case it.Type != 4 && typ == 8:
		return invalid("type", "INTERACTION_RESPONSE_TYPE_INVALID", "Interaction response type 8 is only valid for autocomplete interactions")
	case typ != 8:
		return nil
	}
	var d struct {
		Choices []map[string]any `json:"choices"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return invalid("data", "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
	}
	if len(d.Choices) > 25 {
		return invalid("data.choices", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
	}
	for i, c := range d.Choices {
		p := "data.choices." + strconv.Itoa(i)
		if err := between(c, "name", p, 1, 100); err != nil {
			return err
		}
		if v, ok := c["value"].(string); ok && runes(v) > 100 {
			return invalid(p+".value", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
		}
		if _, ok := c["value"]; !ok {
			return invalid(p+".value", "BASE_TYPE_REQUIRED", "This field is required")
		}
	}
	return nil
}

// registeredCommand finds a command registered for a guild (or
// globally); caller holds s.mu.
func (s *Server) registeredCommand(guildID, name string) (map[string]any, bool) {
	for _, scope := range []string{guildID, "global"} {
		for _, raw := range s.commands[scope] {
			var cmd map[string]any
			if json.Unmarshal(raw, &cmd) == nil && cmd["name"] == name {
				return cmd, true
			}
		}
	}
	return nil, false
}

// registeredOption finds an option of a registered command.
func registeredOption(cmd map[string]any, name string) (map[string]any, bool) {
	opts, _ := cmd["options"].([]any)
	for _, o := range opts {
		if om, ok := o.(map[string]any); ok && om["name"] == name {
			return om, true
		}
	}
	return nil, false
}

// Autocomplete types into a command's option, as the Discord client does
// while the person writes a slash command: an interaction of type 4 with
// the options given so far and the focused one's partial text. Only an
// option registered with autocomplete gets one.
func (s *Server) Autocomplete(channelID, name string, user User, opts map[string]any, focused, typed string) *Interaction {
	s.t.Helper()
	return do(s, func() (*Interaction, error) {
		c, err := s.channel(channelID)
		if err != nil {
			return nil, err
		}
		cmd, ok := s.registeredCommand(c.GuildID, name)
		if !ok {
			return nil, fmt.Errorf("command /%s was never registered", name)
		}
		fo, ok := registeredOption(cmd, focused)
		if auto, _ := fo["autocomplete"].(bool); !ok || !auto {
			return nil, fmt.Errorf("option %q of /%s does not autocomplete", focused, name)
		}
		options := []any{map[string]any{"name": focused, "type": fo["type"], "value": typed, "focused": true}}
		for _, k := range slices.Sorted(maps.Keys(opts)) {
			o, ok := registeredOption(cmd, k)
			if !ok {
				return nil, fmt.Errorf("/%s has no option %q", name, k)
			}
			options = append(options, map[string]any{"name": k, "type": o["type"], "value": opts[k]})
		}
		return s.newInteraction(4, channelID, "", user, map[string]any{"id": cmd["id"], "name": name, "type": 1, "guild_id": c.GuildID, "options": options})
	})
}

// Choices are the suggestions an autocomplete interaction was answered with.
func (it *Interaction) Choices() []map[string]any {
	var cb struct {
		Data struct {
			Choices []map[string]any `json:"choices"`
		} `json:"data"`
	}
	_ = json.Unmarshal(it.Response, &cb)
	return cb.Data.Choices
}

// optionValue checks a value the client would send for a registered
// option: an INTEGER only as a whole number within its min and max (the
// client does not let anything else through), a string as given.
func optionValue(o map[string]any, v any) (int, any, error) {
	typ := num(o["type"])
	if typ != 4 {
		return typ, v, nil
	}
	n, ok := v.(int)
	if !ok {
		return 0, nil, fmt.Errorf("option %q is an integer; the client sends no %T", o["name"], v)
	}
	if lo, ok := o["min_value"].(float64); ok && float64(n) < lo {
		return 0, nil, fmt.Errorf("option %q: %d is below its min_value %v; the client refuses it", o["name"], n, lo)
	}
	if hi, ok := o["max_value"].(float64); ok && float64(n) > hi {
		return 0, nil, fmt.Errorf("option %q: %d is above its max_value %v; the client refuses it", o["name"], n, hi)
	}
	return 4, n, nil
}
