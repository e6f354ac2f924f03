/** How the demo server names itself on the 2026 side; the wire's names and codes are in @app/wire. */
export const SERVER_INFO = { name: 'mcp-task-gateway-demo-server', version: '0.1.0' };
