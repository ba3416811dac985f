package rezagent_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPayloadAttributeValue pins the stored form of payloads, which
// attributevalue.Marshal writes: parsed JSON (numbers as json.Number) and
// the values a Go producer puts in a Payload.
func TestPayloadAttributeValue(t *testing.T) {
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	m := func(kv map[string]types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: kv}
	}
	l := func(v ...types.AttributeValue) types.AttributeValue {
		if v == nil {
			v = []types.AttributeValue{}
		}
		return &types.AttributeValueMemberL{Value: v}
	}
	null := &types.AttributeValueMemberNULL{Value: true}
	tests := []struct {
		name  string
		json  string
		built rezagent.Payload
		want  types.AttributeValue
	}{
		{"numbers keep their digits", `{"big":123456789012345678901234567890,"neg":-42,"small":0.000001,"e":1e10,"z":0}`, nil,
			m(map[string]types.AttributeValue{"big": n("123456789012345678901234567890"), "neg": n("-42"), "small": n("0.000001"), "e": n("1e10"), "z": n("0")})},
		{"zero values are values", `{"f":false,"s":"","n":null}`, nil,
			m(map[string]types.AttributeValue{"f": &types.AttributeValueMemberBOOL{Value: false}, "s": str(""), "n": null})},
		{"empty containers stay containers", `{"o":{},"a":[]}`, nil,
			m(map[string]types.AttributeValue{"o": m(map[string]types.AttributeValue{}), "a": l()})},
		{"nesting and unicode", `{"list":[true,null,"héllo 😀",{"m":[1,[2]]}]}`, nil,
			m(map[string]types.AttributeValue{"list": l(&types.AttributeValueMemberBOOL{Value: true}, null, str("héllo 😀"),
				m(map[string]types.AttributeValue{"m": l(n("1"), l(n("2")))}))})},
		{"a Go producer's strings, ints and nested payload", "",
			rezagent.Payload{"text": "hi", "tags": []string{"a", "b"}, "n": 7, "p": rezagent.Payload{"x": 1.5}},
			m(map[string]types.AttributeValue{"text": str("hi"), "tags": l(str("a"), str("b")), "n": n("7"), "p": m(map[string]types.AttributeValue{"x": n("1.5")})})},
		{"nil payload", "", nil, null},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.built
			if tt.json != "" {
				var err error
				p, err = rezagent.ParsePayload([]byte(tt.json))
				require.NoError(t, err)
			}
			got, err := attributevalue.Marshal(p)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "Marshal")
			if tt.json == "" {
				return
			}
			var back rezagent.Payload
			require.NoError(t, attributevalue.Unmarshal(got, &back), "round trip")
			assert.Equal(t, p, back, "round trip")
		})
	}
}
