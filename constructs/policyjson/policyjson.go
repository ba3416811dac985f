// Package policyjson reads IAM policy documents as a synthesized template
// holds them (decoded JSON), for the checks that inspect grants.
package policyjson

// Strings reads a policy element that IAM lets be one string or a list
// (Action, Resource, Principal's service): the strings it holds, in order.
// Anything that is not a string (an Fn::Join, a Ref) is left out.
func Strings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
