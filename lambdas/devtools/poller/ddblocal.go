package poller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
)

// Streams is the DynamoDB Streams client of c for reading DynamoDB Local's
// streams as AWS writes them. DynamoDB Local's GetRecords writes an empty
// map attribute of an image as {} where AWS writes {"M":{}}, and the SDK
// decodes that {} as the value of the attribute before it (an
// uncategorised Stak message's taxonomy came back as the string of its
// pk, so its consumer skipped the expiry). No attribute value is ever {}:
// the client puts the map back before the SDK reads the answer.
func Streams(c *dynamodb.Client) *dynamodbstreams.Client {
	return streamsapi.NewClient(c, func(o *dynamodbstreams.Options) {
		o.Interceptors.AddBeforeDeserialization(emptyMaps{})
	})
}

type emptyMaps struct{}

func (emptyMaps) BeforeDeserialization(_ context.Context, in *smithyhttp.InterceptorContext) error {
	if _, ok := in.Input.(*dynamodbstreams.GetRecordsInput); !ok || in.Response == nil || in.Response.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(in.Response.Body)
	in.Response.Body.Close()
	if err != nil {
		return fmt.Errorf("poller: read GetRecords answer: %w", err)
	}
	mended, err := mendEmptyMaps(body)
	if err != nil {
		return err
	}
	in.Response.Body = io.NopCloser(bytes.NewReader(mended))
	in.Response.ContentLength = int64(len(mended))
	return nil
}

// mendEmptyMaps rewrites every {} attribute value of a GetRecords answer's
// keys and images as {"M":{}}. Numbers are kept as written.
func mendEmptyMaps(body []byte) ([]byte, error) {
	var answer map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&answer); err != nil {
		return nil, fmt.Errorf("poller: GetRecords answer: %w", err)
	}
	records, _ := answer["Records"].([]any)
	for _, r := range records {
		rec, _ := r.(map[string]any)
		change, _ := rec["dynamodb"].(map[string]any)
		for _, img := range []string{"Keys", "NewImage", "OldImage"} {
			if attrs, ok := change[img].(map[string]any); ok {
				for k, v := range attrs {
					attrs[k] = mendValue(v)
				}
			}
		}
	}
	return json.Marshal(answer)
}

// mendValue mends one attribute value and the values inside it.
func mendValue(v any) any {
	av, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if len(av) == 0 {
		return map[string]any{"M": map[string]any{}}
	}
	switch {
	case av["M"] != nil:
		if m, ok := av["M"].(map[string]any); ok {
			for k, e := range m {
				m[k] = mendValue(e)
			}
		}
	case av["L"] != nil:
		if l, ok := av["L"].([]any); ok {
			for i, e := range l {
				l[i] = mendValue(e)
			}
		}
	}
	return av
}
