package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"

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
		for _, m := range config.PermissionModes {
			p.Enum = append(p.Enum, m)
		}
	}
	return sc
}
