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
)
