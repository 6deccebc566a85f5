// Package contract is what the agents' output contracts share: problems and
// notes with their rules ([Problem], [Rule], [Report]), the output formats
// ([Format], one sniffer: [SniffFormat]), an event-aware diff, and shapes
// whose drift tells what a new agent build changed. The JSON scanner and
// line reader they are written on are package contract/jsonscan. Each
// agent's contract lives with its profile: Cursor's in internal/agents/cursor,
// the others' in package agent.
//
// [Options] and [ExitUnknown] are common to every contract.
//
// # Shapes and drift
//
// A [Shape] summarises a run without its values: event kinds, tool kinds,
// and the JSON types of every field path per event kind. [Drift] lists what
// differs between two shapes, leaving out what a larger change implies (the
// fields of a new tool kind, the sub-fields of a removed object).
// [DiffEvents] compares two streams event by event; a changed event shows
// only its changed fields ([DiffFields]), and a long changed line or value
// an excerpt around its first difference.
package contract
