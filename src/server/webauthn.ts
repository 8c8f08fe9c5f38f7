/**
 * The WebAuthn library (@simplewebauthn/server), in one place: the build makes this module a bundle
 * of its own (dist/webauthn.js, loaded when the status server starts), because the library and
 * its certificate parsers would otherwise double dist/cli.js, which every `loopx` call loads.
 */
export {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
export type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
export { cose, decodeCredentialPublicKey, isoCBOR } from '@simplewebauthn/server/helpers';
