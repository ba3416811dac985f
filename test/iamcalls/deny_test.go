package iamcalls

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A Deny of another service's actions leaves a function's DynamoDB grants
// as they are; one that may name a DynamoDB action is refused, since the
// check does not compute what it takes away.
func TestDenyStatements(t *testing.T) {
	for action, ok := range map[string]bool{
		`"sts:AssumeRole"`:                true,
		`["sts:AssumeRole","kms:*"]`:      true,
		`"dynamodb:DeleteItem"`:           false,
		`"*"`:                             false,
		`["sts:AssumeRole","dynamodb:*"]`: false,
	} {
		res := map[string]resource{
			"Fn":   {Type: "AWS::Lambda::Function", Properties: json.RawMessage(`{"Role":{"Fn::GetAtt":["Role","Arn"]},"Environment":{"Variables":{"DYNASTACK_SERVICE":"demo"}}}`)},
			"Pol":  {Type: "AWS::IAM::Policy", Properties: json.RawMessage(`{"Roles":[{"Ref":"Role"}],"PolicyDocument":{"Statement":[{"Effect":"Deny","Action":` + action + `,"Resource":"*"}]}}`)},
			"Role": {Type: "AWS::IAM::Role", Properties: json.RawMessage(`{}`)},
		}
		st := stage{name: "t", functions: map[string][]grant{}, tables: map[string]string{}}
		err := st.add(res)
		if ok {
			assert.NoError(t, err, "Deny of %s", action)
		} else {
			assert.ErrorContains(t, err, "Deny", "Deny of %s", action)
		}
	}
}
