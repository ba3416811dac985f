package table

// DynamoDB limits that validation enforces before CloudFormation would.
// See https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
const (
	// MaxGlobalSecondaryIndexes is the default quota of GSIs per table.
	MaxGlobalSecondaryIndexes = 20
	// MaxNonKeyAttributes is the number of projected non-key attributes across
	// all secondary indexes of a table.
	MaxNonKeyAttributes = 100
	// MinTableNameLength and MaxTableNameLength bound a table name.
	MinTableNameLength = 3
	MaxTableNameLength = 255
	// MinIndexNameLength and MaxIndexNameLength bound an index name.
	MinIndexNameLength = 3
	MaxIndexNameLength = 255
	// MaxKeyAttributeNameLength bounds the name of a key attribute
	// (partition or sort key of the table or of an index).
	MaxKeyAttributeNameLength = 255
	// MinRecoveryPeriodDays and MaxRecoveryPeriodDays bound the
	// point-in-time recovery window.
	MinRecoveryPeriodDays = 1
	MaxRecoveryPeriodDays = 35
	// MaxOnDemandRequestUnits is DynamoDB's default per-table throughput
	// quota for on-demand tables (reads and writes alike): a cap above it is
	// refused, since the quota binds first.
	MaxOnDemandRequestUnits = 40000
	// MinWarmReadUnits and MinWarmWriteUnits are the warm throughput every
	// new on-demand table has: a lower WarmThroughput buys nothing.
	MinWarmReadUnits  = 12000
	MinWarmWriteUnits = 4000
)

// On-demand throughput caps of the stage policy (request units per second,
// table and each index alike). They bound what a runaway client or a bug
// can cost: at the prices of 2026 (us-east-1, $0.125 per million read and
// $0.625 per million write request units) the prod caps cost at most
// $4.50 an hour in reads and $11.25 an hour in writes per table.
const (
	DevMaxReadRequestUnits    = 1000
	DevMaxWriteRequestUnits   = 1000
	StageMaxReadRequestUnits  = 2000
	StageMaxWriteRequestUnits = 2000
	ProdMaxReadRequestUnits   = 10000
	ProdMaxWriteRequestUnits  = 5000
)
