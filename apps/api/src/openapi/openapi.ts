import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/** The OpenAPI document of the API as registered (every controller and DTO). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('MCP Task Gateway')
    .setDescription(
      'Durable long-running MCP tool work. Submit a task against a toolset, read it back later, ' +
        'cancel it. Every error is application/problem+json (RFC 9457). Authenticate with ' +
        '`Authorization: Bearer <JWT or API key>`.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A JWT or an mtg_ API key' })
    .build();
  return SwaggerModule.createDocument(app, config);
}

/**
 * Serves the document at `/openapi.json` and a browsable page at `/docs`. Both are public (no
 * token): the contract is not a secret, and a newcomer needs it before holding a key.
 */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}
