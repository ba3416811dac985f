package stak_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/dynastack/dynastack/lambdas/services/stak/stakapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The data half of docs/restoring.md, rehearsed on DynamoDB Local: a copy
// of the table under a new name stands in for the point-in-time restore;
// its items equal the source's at the copy, the writes after it are the
// lost window, and a recount of the restored table finds its counters
// exact (they travel with their items).
func TestRestoreRehearsal(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	s.setup(t)
	both := s.toUsers(t, "to both", "billing", "u1", "u2")
	s.toUsers(t, "to u1", "", "u1")
	pub := s.toEveryone(t, "to all", "news")
	s.markRead(t, "u1", both.Header.ID)
	s.markRead(t, "u1", pub.Header.ID)
	before := strings.ReplaceAll(testenv.Digest(t, s.Client, s.Table), s.Table+" ", "")
	atRestorePoint := s.stats(t, "u1")

	// "restore-table-to-point-in-time": same keys, every item copied.
	desc, err := s.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table)})
	require.NoError(t, err)
	restored := s.Table + "-r20260309T0830"
	_, err = s.Client.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(restored), KeySchema: desc.Table.KeySchema,
		AttributeDefinitions: desc.Table.AttributeDefinitions, BillingMode: types.BillingModePayPerRequest})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = s.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(restored)})
	})
	scan := dynamodb.NewScanPaginator(s.Client, &dynamodb.ScanInput{TableName: aws.String(s.Table), ConsistentRead: aws.Bool(true)})
	copied := 0
	for scan.HasMorePages() {
		page, err := scan.NextPage(ctx)
		require.NoError(t, err)
		for _, item := range page.Items {
			_, err := s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(restored), Item: item})
			require.NoError(t, err)
			copied++
		}
	}
	require.Positive(t, copied, "items copied")

	// The lost window: a write to the old table after the restore point.
	s.toUsers(t, "after the restore point", "", "u1")

	// Compare: the restored items are the source's at the restore point.
	afterDigest := strings.ReplaceAll(testenv.Digest(t, s.Client, restored), restored+" ", "")
	assert.Equal(t, before, afterDigest, "restored items against the source's at the restore point")
	assert.NotEqual(t, strings.ReplaceAll(testenv.Digest(t, s.Client, s.Table), s.Table+" ", ""), afterDigest, "the old table went on (the lost window)")

	// The stack's functions now name the restored table; recount it.
	cfg := servicetest.Config(t, stak.ConfigFromEnv, map[string]string{stakcontract.EnvTable: restored})
	cfg.Client = s.Client
	s.H = asPathUser(stakapi.NewHandler(cfg))
	for _, body := range []string{`{"uid":"u1"}`, `{"uid":"u2"}`} {
		assert.Empty(t, s.recount(t, body).Changes, "recount of the restored table, %s", body)
	}
	assert.Equal(t, atRestorePoint, s.stats(t, "u1"), "u1's counters as at the restore point")
}
