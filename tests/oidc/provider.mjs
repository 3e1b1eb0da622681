// The players' identity provider for tests/oidc/test_oidc_provider.py: oidc-provider (a certified OpenID
// Connect provider) on 127.0.0.1, its discovery document, JWKS and token endpoint as they are.
//
// The platform's login service is the client `felt-login`: it asks for a player's access token with the
// client_credentials grant and a resource indicator (RFC 8707) naming Felt, and gets a JWT access token
// (RFC 9068) whose `player_id` claim names the player (`player` in the token request's body; `alg` there picks RS256, ES256
// or EdDSA). The test drives the provider through /_test/*: rotate its keys (a new key of each type signs,
// the old ones are kept or dropped), take its JWKS down and up, count the JWKS fetches.
//
// Prints {"issuer": ...} on stdout once it listens. PORT: 0 picks a free one.

import * as crypto from 'node:crypto';
import * as http from 'node:http';

import Provider from 'oidc-provider';

const AUDIENCE = process.env.FELT_AUDIENCE || 'https://felt.example/api';
const SECRET = 'felt-login-secret';
const ALGORITHMS = { RS256: ['rsa', { modulusLength: 2048 }], ES256: ['ec', { namedCurve: 'P-256' }], EdDSA: ['ed25519', {}] };

let generation = 0;
function newKeys() {
  generation += 1;
  return Object.entries(ALGORITHMS).map(([alg, [type, options]]) => {
    const { privateKey } = crypto.generateKeyPairSync(type, options);
    return { ...privateKey.export({ format: 'jwk' }), kid: `${alg.toLowerCase()}-${generation}`, alg, use: 'sig' };
  });
}

let keys = newKeys();
let jwksDown = false;
let jwksFetches = 0;
let issuer;
let provider;

function build() {
  const built = new Provider(issuer, {
    clients: [{
      client_id: 'felt-login',
      client_secret: SECRET,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    }],
    jwks: { keys },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => {
          if (resource !== AUDIENCE) throw new Error(`unknown resource ${resource}`);
          return {
            scope: 'play',
            audience: AUDIENCE,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: ctx.oidc.body?.alg || 'ES256' } },
          };
        },
      },
    },
    extraTokenClaims: (ctx) => {
      const player = ctx.oidc.body?.player;
      return player ? { player_id: player } : undefined;
    },
    enabledJWA: {
      idTokenSigningAlgValues: Object.keys(ALGORITHMS),
    },
  });
  built.on('server_error', (_ctx, error) => console.error('server_error', error));
  return built;
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, issuer);
  if (url.pathname === '/_test/rotate' && req.method === 'POST') {
    const drop = url.searchParams.get('drop') === '1';
    keys = [...newKeys(), ...(drop ? [] : keys)];
    provider = build();
    return send(res, 200, { kids: keys.map((k) => k.kid) });
  }
  if (url.pathname === '/_test/jwks' && req.method === 'POST') {
    jwksDown = url.searchParams.get('down') === '1';
    return send(res, 200, { down: jwksDown });
  }
  if (url.pathname === '/_test/stats') {
    return send(res, 200, { jwks_fetches: jwksFetches, kids: keys.map((k) => k.kid) });
  }
  if (url.pathname === '/jwks') {
    jwksFetches += 1;
    if (jwksDown) return send(res, 503, { error: 'down for the test' });
  }
  return provider.callback()(req, res);
});

server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  provider = build();
  console.log(JSON.stringify({ issuer }));
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
