// @erg/address-policy — which network addresses erg may connect to on a user's behalf: the classes
// of internal addresses (address.ts), a project's allowance of internal hosts (allowance.ts), and
// the checked resolution every such connection goes through (resolve.ts). Used by suites' webhooks
// (@erg/suites) and clusters' SSH connections (@erg/slurm), and by the API at registration.
export { forbiddenClass, isIpAddress, literalAddress, type AddressClass } from './address';
export {
  addressRefusal, allowanceIssues, compileAllowance, hostRefusal, nameAllowed, NO_ALLOWANCE, type Allowance, type HostRefusal,
} from './allowance';
export { resolveAllowed, systemResolver, type Resolution, type Resolver } from './resolve';
