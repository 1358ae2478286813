// A JetStream API error: nats-server's {code, err_code, description}. Descriptions are load-bearing (nats.js
// compares e.g. "stream not found" verbatim), so each one is built from an entry of api/js-error-table.ts.

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly errCode: number,
    readonly description: string,
  ) {
    super(description);
    this.name = 'ApiError';
  }

  toJSON(): { code: number; err_code: number; description: string } {
    return { code: this.code, err_code: this.errCode, description: this.description };
  }
}
