package redact

// Walk masks secrets in every string of a decoded JSON value (objects,
// arrays and strings are changed in place) and reports whether any was.
func Walk(v any) (any, bool) {
	changed := false
	return walk(v, &changed), changed
}

func walk(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		if n := String(x); n != x {
			*changed = true
			return n
		}
	case map[string]any:
		for k, e := range x {
			x[k] = walk(e, changed)
		}
	case []any:
		for i, e := range x {
			x[i] = walk(e, changed)
		}
	}
	return v
}
