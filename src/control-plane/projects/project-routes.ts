import { route } from '../http/route.js';
import { createProject, listProjects } from './project-service.js';

export const projectRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/projects',
    permission: 'read',
    body: 'none',
    handle: async ({ ws }) => ({ body: { projects: await listProjects(ws) } }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/projects',
    permission: 'project.create',
    body: 'project-create',
    handle: async ({ ws, body }) => ({ status: 201, body: await createProject(ws, body) }),
  }),
];
