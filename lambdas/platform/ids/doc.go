// Package ids is what the services know about identifiers, whichever
// path carries them: how they are made ([NewULID]: time-ordered, for sort
// keys) and what makes one acceptable ([CheckKey]: the rule every key
// obeys, whether it arrives in a path, a body or a queue message;
// [CanonicalUUID]; [ValidID] for a caller-chosen request or correlation
// id, which is logged). The HTTP router and the queue consumers both
// import it; it imports neither.
package ids
