// Package drift compares two runs of an agent: event by event, and by the
// shape of their output.
//
// A [Shape] summarises a run without its values: event kinds, tool kinds,
// and the JSON types of every field path per event kind. [Drift] lists what
// differs between two shapes, leaving out what a larger change implies (the
// fields of a new tool kind, the sub-fields of a removed object).
// [DiffEvents] compares two streams event by event; a changed event shows
// only its changed fields ([DiffFields]), and a long changed line or value
// an excerpt around its first difference.
package drift
