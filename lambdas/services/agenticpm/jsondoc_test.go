package agenticpm

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

func TestStorableNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0.0": true, "12345678901234567890": true, "0.33": true,
		"1e125": true, "9.9e125": true, "1e126": false, "1e-130": true, "1e-131": false,
		"0.00001e-125": true, "0.00001e-126": false,
		"12345678901234567890123456789012345678": true, "123456789012345678901234567890123456789": false,
		"1234567890123456789012345678901234567800000": true, "1e99999999999999999999": false,
	} {
		if got := storableNumber(s); got != want {
			t.Errorf("storableNumber(%s) = %v, want %v", s, got, want)
		}
	}
}

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

func TestULID(t *testing.T) {
	at := time.Date(2026, 2, 4, 10, 0, 0, 0, time.UTC)
	a, b := defaultULID(at), defaultULID(at.Add(time.Millisecond))
	if !validULID(a) || !validULID(b) || a[:10] >= b[:10] || a == defaultULID(at) {
		t.Errorf("ULIDs %s %s", a, b)
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
