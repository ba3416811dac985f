package testenv

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/require"
)

// Digest returns every item of the tables as sorted JSON lines, read
// consistently: compare two digests to prove that a request changed
// nothing.
func Digest(t testing.TB, client *dynamodb.Client, tables ...string) string {
	t.Helper()
	var lines []string
	for _, table := range tables {
		p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
		for p.HasMorePages() {
			out, err := p.NextPage(context.Background())
			require.NoError(t, err)
			for _, it := range out.Items {
				v, err := ddb.FromAttributeValue(&types.AttributeValueMemberM{Value: it})
				require.NoError(t, err)
				b, _ := json.Marshal(v)
				lines = append(lines, table+" "+string(b))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
