// ESM entry: the same functions as index.js.
import cjs from "./index.js";

export const { standIn, binaryPath, platformPackage } = cjs;
export default cjs;
