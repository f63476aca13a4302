package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

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

// withModes lists the permission modes Claude Code has in the schema's
// permissionMode, so that a client is told the choices and a wrong one is
// refused before anything starts.
func withModes(sc *jsonschema.Schema) *jsonschema.Schema {
	if p := sc.Properties["permissionMode"]; p != nil {
		for _, m := range modeWords() {
			p.Enum = append(p.Enum, m)
		}
	}
	return sc
}

// modeWords are the modes and their aliases (manual), as the CLI takes them.
func modeWords() []string {
	words := slices.Clone(config.PermissionModes)
	for _, alias := range slices.Sorted(maps.Keys(config.PermissionModeAliases)) {
		words = append(words, alias)
	}
	return words
}

// plainModes refuses a tool call's unknown permissionMode in plain words
// before the schema's validator does in its own ("validating root:
// validating /properties/permissionMode: enum: …").
func plainModes(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil {
			var args struct {
				PermissionMode *string `json:"permissionMode"`
			}
			if json.Unmarshal(call.Params.Arguments, &args) == nil && args.PermissionMode != nil && !slices.Contains(modeWords(), *args.PermissionMode) {
				var res sdk.CallToolResult
				res.SetError(fmt.Errorf("permissionMode %q is not a permission mode; use one of %s", *args.PermissionMode, config.PermissionModeChoices()))
				return &res, nil
			}
		}
		return next(ctx, method, req)
	}
}
