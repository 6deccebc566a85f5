package contract

// ExitUnknown is the exit code of a run whose exit status is not known, such
// as an incomplete recording.
const ExitUnknown = -1

// Options tune validation. The zero value checks the contract as documented.
type Options struct {
	// SkipComments skips stdout lines that are blank or whose first non-blank
	// byte is '#'. Some repositories prepend such comments to saved
	// transcripts, or leave blank lines at their end; they are not agent
	// output. Skipped lines keep their numbers and are listed as notes.
	// Without this option they are problems.
	SkipComments bool
}
