'use strict';

// A fatal error: bad options, an unknown queue, a Redis that refuses the login. Redis
// outages are not errors: the worker waits them out.
class RowpumpError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RowpumpError';
  }
}

module.exports = { RowpumpError };
