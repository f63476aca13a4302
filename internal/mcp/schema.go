package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/config"
)

// schemaFor is the input schema the SDK would infer for T.
func schemaFor[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err) // the input types are ours: a failure is a bug
	}
	return sc
}

// withChoices lists the permission modes Claude Code has in the schema's
// permissionMode, and the agents ccbridge runs in its agent, so that a
// client is told the choices and a wrong one is refused before anything
// starts.
func withChoices(sc *jsonschema.Schema) *jsonschema.Schema {
	for _, c := range choices {
		if p := sc.Properties[c.key]; p != nil {
			for _, w := range c.words() {
				p.Enum = append(p.Enum, w)
			}
		}
	}
	return sc
}

// choice is an argument that takes one of a few words.
type choice struct {
	key   string
	words func() []string
	what  string        // what a word is, for a refusal
	say   func() string // the words, for a person
}

var choices = []choice{
	{"permissionMode", modeWords, "a permission mode", config.PermissionModeChoices},
	{"agent", func() []string { return config.Agents }, "an agent ccbridge runs", func() string { return strings.Join(config.Agents, ", ") }},
}

// modeWords are the modes and their aliases (manual), as the CLI takes them.
func modeWords() []string {
	words := slices.Clone(config.PermissionModes)
	for _, alias := range slices.Sorted(maps.Keys(config.PermissionModeAliases)) {
		words = append(words, alias)
	}
	return words
}

// plainChoices refuses a tool call's unknown permissionMode or agent in
// plain words before the schema's validator does in its own ("validating
// root: validating /properties/permissionMode: enum: …").
func plainChoices(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil {
			var args map[string]json.RawMessage
			_ = json.Unmarshal(call.Params.Arguments, &args)
			for _, c := range choices {
				var val string
				if raw, ok := args[c.key]; ok && json.Unmarshal(raw, &val) == nil && !slices.Contains(c.words(), val) {
					var res sdk.CallToolResult
					res.SetError(fmt.Errorf("%s %q is not %s; use one of %s", c.key, val, c.what, c.say()))
					return &res, nil
				}
			}
		}
		return next(ctx, method, req)
	}
}
