//go:build windows

package normalize

// peakRSSProgram: Windows reports no peak memory of an ended child here.
const peakRSSProgram = ""
