// Package ddbguard compares two sets of CloudFormation templates and reports
// the DynamoDB table changes that `cdk diff` shows as plain updates although
// CloudFormation rejects them (two GSIs in one update, a key schema change on
// a custom-named table) or they hurt the live table (a dropped retention
// policy, a renamed TTL attribute).
//
// A Set is one side: a template file, a golden directory
// (<dir>/<stage>/<stack>.template.json) or a CDK cloud assembly. Compare
// pairs stacks by stage and stack, tables by logical id and then by
// TableName (or key schema when unnamed), and returns a Report of Hazards,
// each with the way to ship the change safely, and of safe Changes.
// Report.Acknowledge lets hazards acknowledged on purpose pass.
//
// docs/reviewing-changes.md lists the hazard classes and how to run the
// guard.
package ddbguard
