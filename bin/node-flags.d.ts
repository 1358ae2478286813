export declare const FLOTILLA_NODE_FLAGS: readonly string[];
