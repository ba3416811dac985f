// Package table is the shared base of every dynastack table construct.
//
// A table construct is two things kept apart on purpose:
//
//   - a [Spec]: the schema a design document fixes (keys, indexes, TTL, and the
//     settings the document requires, such as a stream or point-in-time
//     recovery). A Spec never changes between stages.
//   - a [Policy]: what a stage decides (recovery, removal, deletion protection,
//     billing, encryption, tags). [DefaultPolicy] gives the platform defaults per
//     stage and [Overrides] adjusts them per table and per stage.
//
// [New] validates both, rejects contradictions with an error that names the
// value and the fix, and synthesizes an AWS::DynamoDB::GlobalTable through
// TableV2. [Import] references a table that is already deployed. Both return a
// [Table] whose grant methods are named by intent and scoped to the table and
// its named indexes, never to a wildcard action.
package table
