import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { compiledWhen, type CompileSchemas } from './compile-schemas.js';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * The serializer builder for `schemaController.compilersFactory.buildSerializer`: Fastify's own
 * (fast-json-stringify), each answer's serializer compiled when `when` says.
 */
export function serializerBuilder(when: CompileSchemas): SerializerFactory {
  const pool = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = pool(externalSchemas, options);
    return (route) => {
      const serializer = compiledWhen(when, () => compile(route));
      return (data) => serializer()(data);
    };
  };
}
