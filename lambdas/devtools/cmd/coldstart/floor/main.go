// Command floor is the least a Go Lambda function can be: aws-lambda-go's
// runtime client answering every event with {}. devtools/cmd/coldstart
// builds it as it builds the functions and reports its cold start as the
// floor theirs are compared with.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
}
