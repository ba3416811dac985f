package agenticpm

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

func TestDocRoundTrip(t *testing.T) {
	in := Doc(`{"a":[1,2.50,"x",true,null,{"b":{}}],"big":123456789012345678901234567890}`)
	av, err := attributevalue.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Doc
	if err := attributevalue.Unmarshal(av, &out); err != nil {
		t.Fatal(err)
	}
	// DynamoDB would normalize 2.50 to 2.5; the conversion itself keeps text.
	if string(out) != `{"a":[1,2.50,"x",true,null,{"b":{}}],"big":123456789012345678901234567890}` {
		t.Errorf("round trip %s", out)
	}
}

func TestConfigFromEnv(t *testing.T) {
	if _, err := ConfigFromEnv(func(string) string { return "" }); err == nil {
		t.Error("missing table accepted")
	}
	a, _ := ConfigFromEnv(func(k string) string { return map[string]string{EnvTable: "AgenticPM-dev"}[k] })
	b, _ := ConfigFromEnv(func(k string) string {
		return map[string]string{EnvTable: "AgenticPM-dev", EnvCursorKey: "secret"}[k]
	})
	if a.Table != "AgenticPM-dev" || len(a.CursorKey) == 0 || string(b.CursorKey) != "secret" {
		t.Errorf("configs %+v %+v", a, b)
	}
}
