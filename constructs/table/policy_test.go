package table_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestDefaultPolicy(t *testing.T) {
	tests := []struct {
		stage       table.Stage
		pitr        bool
		removal     awscdk.RemovalPolicy
		protected   bool
		read, write int
	}{
		{table.Dev, false, awscdk.RemovalPolicy_DESTROY, false, 1000, 1000},
		{table.Stg, true, awscdk.RemovalPolicy_RETAIN, false, 2000, 2000},
		{table.Prod, true, awscdk.RemovalPolicy_RETAIN, true, 10000, 5000},
	}
	for _, tt := range tests {
		t.Run(string(tt.stage), func(t *testing.T) {
			p, err := table.DefaultPolicy(tt.stage)
			require.NoError(t, err)
			assert.Equal(t, tt.pitr, p.PointInTimeRecovery, "pitr")
			assert.Equal(t, tt.removal, p.RemovalPolicy, "removal")
			assert.Equal(t, tt.protected, p.DeletionProtection, "protection")
			assert.Equal(t, table.OnDemand, p.Billing.Mode, "billing mode")
			assert.Equal(t, tt.read, p.Billing.MaxReadRequestUnits, "billing read cap")
			assert.Equal(t, tt.write, p.Billing.MaxWriteRequestUnits, "billing write cap")
			assert.Equal(t, table.AWSOwned, p.Encryption, "encryption")
			assert.Equal(t, table.NoStream, p.Stream, "stream")
		})
	}
	_, err := table.DefaultPolicy("qa")
	assert.ErrorContains(t, err, `stage "qa" is not one of dev, stage, prod`, "DefaultPolicy(qa): want an error naming the stage")
}

func TestResolve(t *testing.T) {
	streamSpec := validSpec()
	streamSpec.Stream = table.OldImage
	pitrSpec := validSpec()
	pitrSpec.RequirePointInTimeRecovery = true
	kmsSpec := validSpec()
	kmsSpec.Encryption = table.AWSManaged

	tests := []struct {
		name  string
		spec  table.Spec
		stage table.Stage
		o     table.Overrides
		want  string // error substring; "" for success
		check func(t *testing.T, p table.Policy)
	}{
		{name: "dev default", spec: validSpec(), stage: table.Dev, check: func(t *testing.T, p table.Policy) {
			assert.False(t, p.PointInTimeRecovery, "dev recovery on: %+v", p)
			assert.Zero(t, p.RecoveryPeriodDays, "dev recovery on: %+v", p)
		}},
		{name: "override recovery on in dev", spec: validSpec(), stage: table.Dev, o: table.Overrides{PointInTimeRecovery: ptr(true)}, check: func(t *testing.T, p table.Policy) {
			assert.True(t, p.PointInTimeRecovery, "override ignored: %+v", p)
			assert.Equal(t, table.MaxRecoveryPeriodDays, p.RecoveryPeriodDays, "override ignored: %+v", p)
		}},
		{name: "override recovery off in stage", spec: validSpec(), stage: table.Stg, o: table.Overrides{PointInTimeRecovery: ptr(false)}, check: func(t *testing.T, p table.Policy) {
			assert.False(t, p.PointInTimeRecovery, "override ignored: %+v", p)
			assert.Zero(t, p.RecoveryPeriodDays, "override ignored: %+v", p)
		}},
		{name: "spec requires recovery in dev", spec: pitrSpec, stage: table.Dev, check: func(t *testing.T, p table.Policy) {
			assert.True(t, p.PointInTimeRecovery, "required recovery not applied: %+v", p)
		}},
		{name: "spec stream applied", spec: streamSpec, stage: table.Prod, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.OldImage, p.Stream, "stream")
		}},
		{name: "stream override where none required", spec: validSpec(), stage: table.Dev, o: table.Overrides{Stream: ptr(table.KeysOnly)}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.KeysOnly, p.Stream, "stream")
		}},
		{name: "tags merged", spec: validSpec(), stage: table.Dev, o: table.Overrides{Tags: map[string]string{"team": "payments"}}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, "payments", p.Tags["team"], "tags = %v", p.Tags)
		}},
		{name: "dev retain", spec: validSpec(), stage: table.Dev, o: table.Overrides{RemovalPolicy: ptr(awscdk.RemovalPolicy_RETAIN)}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, awscdk.RemovalPolicy_RETAIN, p.RemovalPolicy, "removal")
		}},
		{name: "on-demand caps", spec: validSpec(), stage: table.Prod, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: 500}}, check: func(t *testing.T, p table.Policy) {
			// The write cap left at 0 keeps the stage's.
			assert.Equal(t, 500, p.Billing.MaxReadRequestUnits, "billing = %+v", p.Billing)
			assert.Equal(t, table.ProdMaxWriteRequestUnits, p.Billing.MaxWriteRequestUnits, "billing = %+v", p.Billing)
			assert.Equal(t, table.OnDemand, p.Billing.Mode, "billing = %+v", p.Billing)
		}},
		{name: "cap above the quota", spec: validSpec(), stage: table.Prod, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, MaxWriteRequestUnits: 40001}}, want: "Billing.MaxWriteRequestUnits=40001 is above DynamoDB's default per-table quota of 40000: use at most 40000"},
		{name: "document's key", spec: kmsSpec, stage: table.Dev, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.AWSManaged, p.Encryption, "encryption: want the spec's")
		}},
		{name: "stage overrides the document's key", spec: kmsSpec, stage: table.Dev, o: table.Overrides{Encryption: ptr(table.AWSOwned)}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.AWSOwned, p.Encryption, "encryption: want the override's")
		}},
		{name: "provisioned", spec: validSpec(), stage: table.Prod, o: table.Overrides{Billing: &table.Billing{Mode: table.Provisioned, ReadCapacity: 5, WriteCapacity: 10}}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.Provisioned, p.Billing.Mode, "billing = %+v", p.Billing)
		}},
		{name: "provisioned without capacity", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.Provisioned}}, want: "Billing.Mode=PROVISIONED needs ReadCapacity and WriteCapacity of at least 1 (got 0/0)"},
		{name: "capacity with on-demand", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, ReadCapacity: 5}}, want: "Billing.ReadCapacity/WriteCapacity=5/0 with on-demand billing: set Mode to PROVISIONED"},
		{name: "caps with provisioned", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.Provisioned, ReadCapacity: 1, WriteCapacity: 1, MaxWriteRequestUnits: 9}}, want: "cap on-demand throughput only"},
		{name: "negative cap", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: -1}}, want: "Billing.MaxReadRequestUnits=-1 is negative"},
		{name: "unknown billing", spec: validSpec(), stage: table.Dev, o: table.Overrides{Billing: &table.Billing{Mode: "FREE"}}, want: `Billing.Mode="FREE" is not PAY_PER_REQUEST or PROVISIONED`},
		{name: "unknown stage", spec: validSpec(), stage: "qa", want: `stage "qa" is not one of dev, stage, prod`},
		{name: "recovery off where required", spec: pitrSpec, stage: table.Prod, o: table.Overrides{PointInTimeRecovery: ptr(false)}, want: "PointInTimeRecovery=false, but the orders design requires point-in-time recovery in every stage: remove the override"},
		{name: "stream turned off", spec: streamSpec, stage: table.Dev, o: table.Overrides{Stream: ptr(table.NoStream)}, want: `Stream="", but the orders code consumes a OLD_IMAGE stream: remove the Stream override`},
		{name: "stream view changed", spec: streamSpec, stage: table.Dev, o: table.Overrides{Stream: ptr(table.KeysOnly)}, want: `Stream="KEYS_ONLY", but the orders code consumes a OLD_IMAGE stream`},
		{name: "contributor insights on throttled keys", spec: validSpec(), stage: table.Stg, o: table.Overrides{ContributorInsights: ptr(table.ThrottledKeys)}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.ThrottledKeys, p.ContributorInsights, "contributor insights")
		}},
		{name: "contributor insights off by override", spec: validSpec(), stage: table.Prod, o: table.Overrides{ContributorInsights: ptr(table.NoContributorInsights)}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.NoContributorInsights, p.ContributorInsights, "contributor insights")
		}},
		{name: "throttled keys by default in prod only", spec: validSpec(), stage: table.Prod, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.ThrottledKeys, p.ContributorInsights, "default contributor insights")
			assert.Equal(t, table.WarmThroughput{}, p.WarmThroughput, "default warm throughput")
		}},
		{name: "no contributor insights by default in stage", spec: validSpec(), stage: table.Stg, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, table.NoContributorInsights, p.ContributorInsights, "default contributor insights")
		}},
		{name: "warm throughput under raised caps", spec: validSpec(), stage: table.Prod, o: table.Overrides{
			Billing:        &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: 20000, MaxWriteRequestUnits: 8000},
			WarmThroughput: &table.WarmThroughput{ReadUnitsPerSecond: 20000, WriteUnitsPerSecond: 8000},
		}, check: func(t *testing.T, p table.Policy) {
			assert.Equal(t, 20000, p.WarmThroughput.ReadUnitsPerSecond, "warm = %+v", p.WarmThroughput)
			assert.Equal(t, 8000, p.WarmThroughput.WriteUnitsPerSecond, "warm = %+v", p.WarmThroughput)
		}},
		{name: "resource access for a role of another account", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{
			{Principal: "arn:aws:iam::210987654321:role/reporting", Actions: []string{"dynamodb:GetItem"}, Indexes: []string{"GSI1"}},
			{Principal: "210987654321", Actions: []string{"dynamodb:Query"}},
		}}, check: func(t *testing.T, p table.Policy) {
			assert.Len(t, p.ResourceAccess, 2, "access")
		}},
		{name: "resource access for everyone", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "*", Actions: []string{"dynamodb:GetItem"}}}}, want: `ResourceAccess[0]: Principal "*": name an IAM role ARN`},
		{name: "resource access for a user", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "arn:aws:iam::210987654321:user/bob", Actions: []string{"dynamodb:GetItem"}}}}, want: `Principal "arn:aws:iam::210987654321:user/bob"`},
		{name: "resource access to the control plane", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Actions: []string{"dynamodb:DeleteTable"}}}}, want: `action "dynamodb:DeleteTable" is not a data-plane item action`},
		{name: "resource access to scan", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Actions: []string{"dynamodb:Scan"}}}}, want: `action "dynamodb:Scan" is not a data-plane item action`},
		{name: "resource access by wildcard", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Actions: []string{"dynamodb:*"}}}}, want: `action "dynamodb:*"`},
		{name: "resource access to an unknown index", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321", Indexes: []string{"ByDate"}}}}, want: `orders has no index "ByDate": use one of [GSI1]`},
		{name: "resource access granting nothing", spec: validSpec(), stage: table.Prod, o: table.Overrides{ResourceAccess: []table.Access{{Principal: "210987654321"}}}, want: "no Actions and no Indexes grant nothing"},
		{name: "unknown contributor insights mode", spec: validSpec(), stage: table.Dev, o: table.Overrides{ContributorInsights: ptr(table.ContributorInsights("HOT_KEYS"))}, want: `ContributorInsights="HOT_KEYS" is not a mode: use THROTTLED_KEYS`},
		{name: "warm throughput that buys nothing", spec: validSpec(), stage: table.Dev, o: table.Overrides{WarmThroughput: &table.WarmThroughput{ReadUnitsPerSecond: 500}}, want: "WarmThroughput.ReadUnitsPerSecond=500 is below the 12000 every new on-demand table already has"},
		{name: "warm throughput above the quota", spec: validSpec(), stage: table.Prod, o: table.Overrides{WarmThroughput: &table.WarmThroughput{WriteUnitsPerSecond: 50000}}, want: "WarmThroughput.WriteUnitsPerSecond=50000 is above DynamoDB's default per-table quota of 40000"},
		{name: "warm throughput above the cap", spec: validSpec(), stage: table.Prod, o: table.Overrides{WarmThroughput: &table.WarmThroughput{ReadUnitsPerSecond: 15000}}, want: "WarmThroughput.ReadUnitsPerSecond=15000 is above Billing.MaxReadRequestUnits=10000: the cap throttles first"},
		{name: "unknown stream view", spec: validSpec(), stage: table.Dev, o: table.Overrides{Stream: ptr(table.StreamView("BOTH"))}, want: `Stream="BOTH" is not a stream view`},
		{name: "protected but destroyed", spec: validSpec(), stage: table.Stg, o: table.Overrides{DeletionProtection: ptr(true), RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}, want: "DeletionProtection=true with RemovalPolicy=DESTROY"},
		{name: "destroy in prod", spec: validSpec(), stage: table.Prod, o: table.Overrides{DeletionProtection: ptr(false), RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}, want: "RemovalPolicy=DESTROY in prod"},
		{name: "customer key missing", spec: validSpec(), stage: table.Dev, o: table.Overrides{Encryption: ptr(table.CustomerManaged)}, want: "Encryption=CUSTOMER_MANAGED without an EncryptionKey"},
		{name: "unknown encryption", spec: validSpec(), stage: table.Dev, o: table.Overrides{Encryption: ptr(table.Encryption("KMS"))}, want: `Encryption="KMS" is not one of`},
		{name: "recovery window too long", spec: validSpec(), stage: table.Prod, o: table.Overrides{RecoveryPeriodDays: ptr(90)}, want: "RecoveryPeriodDays=90: the window is 1 to 35 days"},
		{name: "recovery window without recovery", spec: validSpec(), stage: table.Dev, o: table.Overrides{RecoveryPeriodDays: ptr(7)}, want: "RecoveryPeriodDays=7 with PointInTimeRecovery=false"},
		{name: "reserved tag", spec: validSpec(), stage: table.Dev, o: table.Overrides{Tags: map[string]string{"stage": "qa"}}, want: `tag "stage" is set by the construct`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := table.Resolve(tt.spec, tt.stage, tt.o)
			if tt.want == "" {
				require.NoError(t, err, "Resolve()")
				tt.check(t, p)
				return
			}
			require.ErrorContains(t, err, tt.want, "Resolve()")
			assert.ErrorIs(t, err, table.ErrInvalid)
		})
	}
}
