// Package ddb is the DynamoDB layer every service's store is written on.
//
// What belongs here: the client, built from a function's environment
// (through platform/awsconf, so AWS_ENDPOINT_URL_DYNAMODB points it
// elsewhere) with options such as the dev tools' recorder; expressions
// written once as constants ([Expr]) with typed values ([S], [N], [B]);
// reads, typed queries and pages with their cursors ([Query], [Page],
// [EncodeCursor]: signed and bound to their query); transactions whose
// operations carry their own meaning when a condition fails ([Tx],
// [IfConditionFailed]); the sentinel errors the SDK's exceptions become
// ([IsUnavailable], [IsConditionFailed]); the item-size arithmetic behind
// the 400 KB limit; how values order as DynamoDB compares them
// ([SortableTime]); and free-form JSON stored as a document without losing
// digits ([Doc]). What a key may be, and how ids are made, is
// platform/ids'.
package ddb
