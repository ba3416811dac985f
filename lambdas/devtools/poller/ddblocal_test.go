package poller_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// TestStreamsEmptyMaps: an item with empty maps (at the top, inside a map,
// inside a list) reaches a consumer through Streams with the same maps,
// in its new and its old image. The plain client shows why Streams
// mends DynamoDB Local's answer: it decodes those maps as something
// else. When DynamoDB Local writes {"M":{}} itself, that half fails:
// drop the mend then.
func TestStreamsEmptyMaps(t *testing.T) {
	ctx := context.Background()
	table, client, arn := stakStream(t)
	empty := func() types.AttributeValue {
		return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
	}
	item := map[string]types.AttributeValue{
		"pk": s("p"), "sk": s("m#empty"), "a": s("before"), "taxonomy": empty(),
		"nested": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"inner": empty(), "n": &types.AttributeValueMemberN{Value: "12345678901234567890.5"}}},
		"list":   &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x"), empty()}},
	}
	type shape struct {
		Taxonomy map[string]string `dynamodbav:"taxonomy"`
		Nested   struct {
			Inner map[string]string `dynamodbav:"inner"`
			N     string            `dynamodbav:"n"`
		} `dynamodbav:"nested"`
		List []any `dynamodbav:"list"`
	}
	read := func(cfg *poller.Config) (images []map[string]types.AttributeValue) {
		cfg.Handler = func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			for _, r := range ev.Records {
				for _, img := range []map[string]events.DynamoDBAttributeValue{r.Change.NewImage, r.Change.OldImage} {
					if img != nil {
						av, err := fn.StreamItem(img)
						require.NoError(t, err)
						images = append(images, av)
					}
				}
			}
			return events.DynamoDBEventResponse{}, nil
		}
		cfg.StreamARN, cfg.Start, cfg.Logger = arn, poller.TrimHorizon, slog.New(slog.DiscardHandler)
		p, err := poller.New(*cfg)
		require.NoError(t, err)
		require.NoError(t, p.Sync(ctx))
		require.Eventually(t, func() bool {
			_, err := p.Poll(ctx)
			require.NoError(t, err)
			return len(images) >= 2
		}, 20*time.Second, 50*time.Millisecond, "the insert's and the delete's images")
		return images
	}
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	require.NoError(t, err)
	_, err = client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": s("p"), "sk": s("m#empty")}})
	require.NoError(t, err)

	mended := read(&poller.Config{Client: poller.Streams(client)})
	require.Len(t, mended, 2)
	for _, img := range mended {
		var got shape
		require.NoError(t, attributevalue.UnmarshalMap(img, &got), "image %v", img)
		assert.Equal(t, map[string]string{}, got.Taxonomy, "taxonomy")
		assert.Equal(t, map[string]string{}, got.Nested.Inner, "nested.inner")
		assert.Equal(t, "12345678901234567890.5", got.Nested.N, "nested.n, as written")
		assert.Equal(t, []any{"x", map[string]any{}}, got.List, "list")
		assert.Equal(t, item, img, "the image is the item")
	}

	// The plain client, read directly: the poller refuses what it decodes
	// (a nil member inside a map or list).
	plain := streamsapi.NewClient(client)
	shards, err := plain.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	require.NoError(t, err)
	seen := 0
	for _, sh := range shards.StreamDescription.Shards {
		it, err := plain.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: poller.TrimHorizon})
		require.NoError(t, err)
		recs, err := plain.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		require.NoError(t, err)
		for _, r := range recs.Records {
			for _, img := range []map[string]streamtypes.AttributeValue{r.Dynamodb.NewImage, r.Dynamodb.OldImage} {
				if img == nil {
					continue
				}
				seen++
				m, isMap := img["taxonomy"].(*streamtypes.AttributeValueMemberM)
				assert.False(t, isMap && len(m.Value) == 0,
					"DynamoDB Local's GetRecords now writes an empty map as AWS does: poller.Streams need not mend it")
			}
		}
	}
	require.Equal(t, 2, seen, "images read with the plain client")
}
