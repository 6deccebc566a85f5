/** A mode of the stand-in (AGENTVCR_MODE). */
export type Mode = "replay" | "record" | "once" | "passthrough" | "rerun";

export interface StandInOptions {
  /** The cassette directory: made absolute against the current directory. */
  cassettes: string;
  /** Default: $AGENTVCR_MODE, else "replay" (replay only, offline; a call with no cassette fails). */
  mode?: Mode;
  /**
   * The real agent, run to record ("record", "once"), in "passthrough", or against the
   * recorded model ("rerun"): a path (made
   * absolute) or a program name looked up in PATH past the stand-in. Default: $AGENTVCR_REAL_AGENT.
   */
  realAgent?: string;
  /** A file the stand-in appends one JSON line per call to (AGENTVCR_RUN_LOG). */
  runLog?: string;
  /** The agentvcr binary to stand in. Default: $AGENTVCR_BINARY, else this platform's package's. */
  binary?: string;
}

export interface StandIn {
  /** The absolute cassette directory. */
  readonly cassettes: string;
  readonly mode: Mode;
  /** The private directory holding the programs made by bin(). */
  readonly dir: string;
  /** The AGENTVCR_* variables the stand-in needs: spread them into the agent's environment. */
  readonly env: Record<string, string>;
  /** PATH with dir first, for code that finds the agent by name. */
  readonly path: string;
  /**
   * The absolute path of an executable that stands in for the agent `name` ("claude",
   * "codex", "qwen", "cursor-agent", ...): a link to agentvcr-standin beside the agentvcr binary
   * (it starts faster, and hands a call that runs the real agent to that agentvcr), else to the
   * agentvcr binary (NAME.exe on Windows), or a copy of it where links are not allowed.
   */
  bin(name: string): string;
  /** Removes dir. */
  cleanup(): void;
}

/** Makes a stand-in over the cassettes of options.cassettes. */
export function standIn(options: StandInOptions): StandIn;
/** The absolute path of the agentvcr binary ($AGENTVCR_BINARY, else this platform's package's). */
export function binaryPath(): string;
/** The npm package holding this platform's binary: "@agentvcr/linux-x64", ... */
export function platformPackage(): string;
